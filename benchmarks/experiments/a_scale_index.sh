#!/usr/bin/env bash
# The A-scale offset of a tile computed once per tile (a_scale_index), not inside the K loops (NOTES 91), against
# the headers at OLD (a commit or a folder; default ab_old/cuda), same build, same call. Why: on the same 128 x 192
# tiles and one group, the ragged kernel ran 8-9% longer than the dense and contiguous ones (dense_as_grouped.sh),
# whose K loops are the same source; the ragged loop alone kept (row0 & 3), known at run time only there, inside the
# loop, and ptxas scheduled it differently (its lo wgmmas' issue split by the B-scale address arithmetic). Dense and
# contiguous SASS is unchanged (k_loop_sass.py); every ragged and masked K loop changes. One call: the ragged and
# masked GPU tests with the change, then ragged rows (forced 128 x 192 and default tiles) and the table's masked
# rows, the sides alternating.
# Predicted: ragged at 128 x 192 within 2% of contiguous if the loop's schedule is the cause (from +8-9%); default
# tiles (256 x 128) and masked rows within +-1.5% (their loops changed by a few instructions).
#   bash benchmarks/experiments/a_scale_index.sh
. "$(dirname "$0")/ab_headers.sh"
ab_setup
ab_prepare_from "${OLD:-ab_old/cuda}"
ab_use new
JDG_TEST_LIMIT=170 ab_tests grouped_ragged_masked_new tests/test_gpu_grouped.py -k "ragged or masked"
DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 ab_rows 2 1 100 dense_as_grouped.py f192 8192,3072,4096 |
  tee -a "$OUT/dense_as_grouped.txt"
ab_rows 2 1 150 moe_models.py idx qwen235_up dsv3_up_4k --ragged-only --even | tee -a "$OUT/moe_rows.txt"
AB_ROUNDS=1 ab_grouped masked | tee -a "$OUT/table_rows.txt"
echo "done in $((SECONDS - start)) s"
