#!/usr/bin/env bash
# Dynamic tiles (dynamic_tiles.patch, NOTES 133's next lead, measured in NOTES 134): past the first round each
# cluster takes the next tile from a device counter instead of every grid-th one, so that clusters that drew cheap
# tiles (ragged and masked groups' last M blocks) take more. DG_TUNE_DYNAMIC_TILES=1 turns it on where there is no
# split K or tail split. The record of session 88's runs 01_ to 03_ (the patch applies to the tree before f2955bf,
# which took it in as heuristics step 18, with each call site's own counters): `dynamic_tiles.sh 1` runs the patch's
# GPU tests (test_gpu_configs.py -k dynamic), two rounds without / with it of ragged_tail_cost.py (the MoE shapes'
# draws) and the MoE step; `dynamic_tiles.sh 2` the table's contiguous and ragged rows, the masked rows with the tail
# split off on both sides (and once as the heuristics run them) and dense rows (one device call each).
. "$(dirname "$0")/prelude.sh"
part=${1:-all}
git apply benchmarks/experiments/dynamic_tiles.patch || exit 1
build
if [ "$part" != 2 ]; then
parallel_tests tests/test_gpu_configs.py -k dynamic 2>&1 | tee "$OUT/tests.txt"
ab DG_TUNE_DYNAMIC_TILES 1 python benchmarks/experiments/ragged_tail_cost.py 4096,7168 7168,2048 2>&1 |
  grep -E "^#| us" | tee "$OUT/ragged.txt"
ab DG_TUNE_DYNAMIC_TILES 1 env DG_PRINT_CONFIGS=1 python benchmarks/experiments/step_kernels.py moe_x_bf16 2>&1 |
  grep -E "^#|us of kernels|jdg_fp8_gemm|block_m=" | tee "$OUT/steps.txt"
fi
if [ "$part" != 1 ]; then
ab DG_TUNE_DYNAMIC_TILES 1 python benchmarks/experiments/grouped_rows.py contiguous 2>&1 | grep -E "^#|TFLOPS" |
  tee "$OUT/contiguous.txt"
ab DG_TUNE_DYNAMIC_TILES 1 env DG_TUNE_TAIL_SPLIT=0 python benchmarks/experiments/grouped_rows.py masked 2>&1 |
  grep -E "^#|TFLOPS" | tee "$OUT/masked.txt"
{ echo "# the heuristics' own masked configuration (the tail split where it pays)"
  timeout -k 5 100 python benchmarks/experiments/grouped_rows.py masked 2>&1 | grep TFLOPS; } | tee -a "$OUT/masked.txt"
ab DG_TUNE_DYNAMIC_TILES 1 python benchmarks/experiments/dense_rows.py 4096,7168,16384 4096,7168,2048 2>&1 |
  grep -E "^#| us" | tee "$OUT/dense.txt"
fi
date -u
[ -d "$OUT/logs" ] && tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
