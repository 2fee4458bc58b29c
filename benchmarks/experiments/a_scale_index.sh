#!/usr/bin/env bash
# a_scale_index.patch: the A-scale offset of a tile (row0 & 3) computed once per tile in the 128- and 64-row passes
# (a_scale_index), not added to the stage's address inside the K loops (NOTES 91). Why: on the same 128 x 192 tiles
# and one group, the ragged kernel ran 8-9% longer than the dense and contiguous ones (dense_as_grouped.sh), whose
# K loops are the same source; only ragged's (and masked's) loops kept row0 & 3, known at run time there, inside.
# Session 51 ran this script's first form (6c8e57f: the change against ab_old/cuda, without the last two steps):
# ragged 128 x 192 -3.4%, ragged default tiles and the masked table rows within +-0.8%, the ragged and masked GPU
# tests passed. Not landed: of the benchmark table's 36 kernels it moves the K loops of 13 (k_loop_sass.py): dense
# 64 x 4096 x 7168, the contiguous K = 7168 rows (256-row segment kernels), the ragged and masked rows; only the
# masked ones were timed. This form: HEAD against HEAD + the patch, all of them included.
# Predicted: ragged 128 x 192 -3% again; the others within +-1.5% (their loops change by 2-5 instructions).
#   bash benchmarks/experiments/a_scale_index.sh
. "$(dirname "$0")/ab_headers.sh"
ab_patch_vs_head "$(dirname "$0")/a_scale_index.patch"
JDG_TEST_LIMIT=170 ab_tests grouped_ragged_masked_new tests/test_gpu_grouped.py -k "ragged or masked"
DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 ab_rows 2 1 100 dense_as_grouped.py f192 8192,3072,4096 |
  tee -a "$OUT/dense_as_grouped.txt"
ab_rows 2 1 150 moe_models.py idx qwen235_up dsv3_up_4k --ragged-only --even | tee -a "$OUT/moe_rows.txt"
AB_ROUNDS=1 ab_grouped masked | tee -a "$OUT/table_rows.txt"
ab_dense 2 64,4096,7168 64,2112,7168 | tee -a "$OUT/dense_rows.txt"
AB_ROUNDS=2 ab_grouped contiguous | tee -a "$OUT/table_rows.txt"
echo "done in $((SECONDS - start)) s"
