#!/usr/bin/env bash
# Contiguous passes whose other rows are padding (ids outside [0, G)) take the plain promotion, the padding rows
# zeroed after the passes (fp8_gemm.cuh, `whole`), against the row-selecting promotion for every tile with a padding
# row (the headers at OLD, default e28e0d4; a commit or a folder), same build, same run. Why (NOTES 89): a group
# padded to 128 rows ends in a tile with padding rows, which took the row-selecting K loop; on small groups that is
# most tiles (DeepSeek-V3 at 4k tokens, ~128 rows per expert: every group's last tile), and contiguous 256-row
# segment tiles trailed ragged's same tiles by ~6% at 384-row groups. One call: the contiguous GPU tests with the
# change (the new NaN-padding case in every forced configuration), then small-group layers and the table's
# contiguous rows, two rounds.
# Predicted (before the run): DeepSeek-V3 at 4k tokens 2-4% faster, groups of 256-512 rows 1-3%, 1024-row groups and
# the table's rows (one padded tile in 30-60) within the K loops' schedule effect, +-1.5%.
#   bash benchmarks/experiments/contiguous_padding_rows.sh
. "$(dirname "$0")/ab_headers.sh"
OLD=${OLD:-e28e0d4}
ab_setup
ab_prepare_from "$OLD"
ab_use new
ab_tests grouped_contiguous_new tests/test_gpu_grouped.py -k contiguous
JDG_TEST_LIMIT=150 ab_tests configs_new tests/test_gpu_configs.py -k "contiguous_nan_padding or contiguous_segments"
ab_rows 2 1 200 moe_models.py pad dsv3_up_4k dsv3_down_4k qwen30_up qwen235_up gptoss_up \
  r384n2048k4096=32,12288,2048,4096 --contiguous-only | tee -a "$OUT/moe_rows.txt"
AB_ROUNDS=2 ab_grouped contiguous | tee -a "$OUT/table_rows.txt"
echo "done in $((SECONDS - start)) s"
