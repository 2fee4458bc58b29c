#!/usr/bin/env bash
# Dynamic tiles (dynamic_tiles.patch, NOTES 133's next lead): past the first round each cluster takes the next tile from
# a device counter instead of every grid-th one, so that clusters that drew cheap tiles (ragged and masked groups' last
# M blocks) take more. DG_TUNE_DYNAMIC_TILES=1 turns it on where there is no split K or tail split.
# tile_schedule_model.py predicts -3.0% / -1.9% / -1.8% on the MoE step's ragged GEMMs (N = 4096 / 7168 / 2048 over
# multinomial draws), ~50 us of the step; nothing on aligned groups or dense rows (where the counter's atomics and the
# slots' hand-over are the only change: level or a little slower). One device call (~9 minutes by the parts' earlier
# times; the step runs last): the patch's GPU tests (test_gpu_configs.py -k dynamic), then two rounds without / with it
# of ragged_tail_cost.py (the MoE shapes' draws), the table's contiguous rows, the masked rows with the tail split off
# on both sides (and once as the heuristics run them), dense rows, and the MoE step.
# `dynamic_tiles.sh 1` runs the tests, the ragged rows and the step; `dynamic_tiles.sh 2` the rest (two device calls of
# under ten minutes each); no argument runs both.
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
