#!/usr/bin/env bash
# Heuristics step 21 (dense tiles whose short last round the tail split halves, counted in the model's cost) against
# the picks before it (DG_TUNE_TAIL_SPLIT=0 takes the old search exactly): one build, each side in its own process,
# two rounds alternating. Prints one line per shape and side (dense_rows.py's); the config lines go to
# $OUT/configs_<side>_<round>.txt. Summary: dense_tail_ab.py.
#   OUT=dir bash benchmarks/experiments/dense_tail_rounds.sh [M,N,K ...]
# Predicted before the first run: 2-3 waves -3% to -12% (2048 x 2112 x 7168 measured -11% with the tiles forced),
# 4-6 waves -1% to +3%, 9 or more +0% to +3% (each whole tile of a tail-split kernel ran ~0.5 us slower, NOTES 27).
# Before the second: held out -2% to -10% each, geometric mean about -5%; 5120 x 5120 x 4096 (10 waves to 7) -1% to
# -5%; controls level.
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
# First run (session 106, the rule as first written: any tile whose last round it halves, in the search's cost):
#   in_sample=(2048,2112,7168 1024,7168,4096 1536,4096,7168 1536,3072,7168 768,7168,16384 1280,5120,5120
#              2048,3072,7168 2560,4096,7168 3072,2048,7168 4096,1536,7168 256,18432,7168 1024,6144,4096)
#   held_out=(768,6144,4096 1024,7168,16384 1536,4096,4096 1536,5120,5120 2560,3072,7168 2560,2112,7168
#             3072,1536,7168 4096,2560,5120 6144,1024,7168 512,14336,4096)
#   mid_waves=(1536,7168,4096 2048,7168,4096 2560,7168,4096 1024,14336,4096 3072,6144,4096 768,28672,4096)
#   many_waves=(6144,7168,4096 4096,18432,7168 1280,28672,4096 3072,18432,7168)
#   controls=(4096,4096,7168 4096,2112,7168 4096,7168,16384)
# Second run (the rule narrowed: only picks narrower than 128 x 192 / 256 x 128 move, to one of those two): the eight
# shapes of the first run it moves, twelve held out, two controls.
in_sample=(2048,2112,7168 1536,3072,7168 2560,4096,7168 256,18432,7168 768,6144,4096 3072,1536,7168 4096,2560,5120
           6144,1024,7168)
held_out=(640,6144,7168 896,4608,4096 1152,3584,7168 1792,3584,7168 2304,2112,7168 2304,4608,4096 3584,1792,7168
          5120,2112,7168 5120,5120,4096 1280,8192,8192 2560,5120,5120 384,18432,7168)
controls=(4096,4096,7168 1536,4096,7168)
# Third run (narrowed again: picks with the accumulator pipeline, 128 x 128 and below, stay, and the full-width tile
# must cost strictly less): twelve shapes held out, two controls (640 x 6144 x 7168 moved in the second run, +11%):
#   bash benchmarks/experiments/dense_tail_rounds.sh 2048,5120,5120 2560,4096,4096 2560,4096,14336 896,5120,4096 \
#     1792,2560,8192 2304,2048,5120 3584,1280,8192 5120,2048,5120 5120,1792,7168 2048,5120,13824 3072,1536,8960 \
#     4096,2560,9728 640,6144,7168 4096,4096,7168
# Predicted before it: each -2% to -10%, geometric mean about -6%; controls level.
shapes=("${@:-${in_sample[@]} ${held_out[@]} ${controls[@]}}")
# shellcheck disable=SC2206
shapes=(${shapes[@]})
for round in 1 2; do
  for side in new old; do
    setting=$([ "$side" = old ] && echo DG_TUNE_TAIL_SPLIT=0 || echo DG_PRINT_CONFIGS=1)
    env "$setting" DG_PRINT_CONFIGS=1 python benchmarks/experiments/dense_rows.py "${shapes[@]}" \
      2>"$OUT/configs_${side}_$round.txt" | sed "s/^/$side r$round /"
  done
done
