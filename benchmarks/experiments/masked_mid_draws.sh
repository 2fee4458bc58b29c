#!/usr/bin/env bash
# Step 20 (128 x 192 masked tiles, NOTES 152) over more masked_m draws: its A/B ran four draws per shape, and the
# benchmark table's one draw of 4 x 256 x 4096 x 7168 (masked_m 284, 238, 199, 290: 10 M blocks) then ran 7.4% slower
# than the table at 642d811, where the A/B's one 10-block draw was +1.3%. Here the default (step 20's 128 x 192)
# against DG_TUNE_BLOCK_N=128 (the tile before it: forcing the width takes step 6's 128 x 128 search), one build, two
# rounds: twelve draws of three moved shapes, and the table's draw.
# Predicted: the table's draw +2% to +8% (a 10-block draw: 220 tiles of 192 leave 88 in the last round, more than the
# tail split evens out over 132 SMs, where 320 tiles of 128 leave 56); over the twelve draws 4 x 256 x 4096 x 7168
# -3% to -6% geometric mean (9- and 11-block draws faster, 10-block ones level or slower), the others -2% to -6%.
# With arguments (DRAWS SHAPE...): those shapes over that many draws instead, without the table's draw. Mixtral's
# decode layers (8 experts, ~128 rows each: hint 153; up 28672 x 4096, down 4096 x 14336) and the same at 256 rows:
#   bash benchmarks/experiments/masked_mid_draws.sh 6 8x128x28672x4096 8x128x4096x14336 8x256x28672x4096 \
#     8x256x4096x14336
# Predicted (before that run): the 128-row ones read 0.9 / 0.5 GB of weights for ~1000 rows, near HBM's pace with
# either tile: within 3%; the 256-row ones -2% to -5%.
# JDG_NEW_SETTING=DG_TUNE_BLOCK_N=192: the "new" side forced to 128 x 192 too, for shapes outside step 20's bounds.
# Step 20's N bound (NOTES 152, after its run), six draws:
#   JDG_NEW_SETTING=DG_TUNE_BLOCK_N=192 bash benchmarks/experiments/masked_mid_draws.sh 6 16x160x3072x4096 \
#     16x256x3072x4096 8x256x3072x7168 4x256x2560x7168 8x256x2048x7168 16x192x2048x7168
# Predicted (before that run): N = 3072 (192-wide tiles pad nothing, 128-wide 24 N blocks) -2% to -5%; N = 2560 (5%
# padding) -2% to +2%; N = 2048 +2% to +6% (NOTES 95: 16 x 192 x 2048 x 7168 +5.8%).
# The tail split under K = 4096 (step 10 measured K = 2048 +4% on older kernels), default tiles on both sides:
#   JDG_NEW_SETTING=DG_TUNE_TAIL_SPLIT=1 bash benchmarks/experiments/masked_mid_draws.sh 6 1x1024x7168x2048 \
#     2x512x7168x2048 4x256x7168x2048 8x128x7168x2048 32x32x7168x2048 16x64x5760x2880
# Predicted (before that run): -3% to +4% per shape; the shapes whose last round is a small share of several (4 x 256:
# ~560 tiles, 32 in the last of five rounds) gain most.
#   bash benchmarks/experiments/masked_mid_draws.sh; python benchmarks/experiments/masked_ab.py $OUT/rows.txt
. "$(dirname "$0")/prelude.sh"
build
draws=${1:-12}
shapes=("${@:2}")
[ ${#shapes[@]} -eq 0 ] && shapes=(4x256x4096x7168 8x256x4096x7168 12x224x6144x4096)
for round in 1 2; do
  for side in new old; do
    setting=()
    [ "$side" = new ] && [ -n "${JDG_NEW_SETTING:-}" ] && setting=("$JDG_NEW_SETTING")
    [ "$side" = old ] && setting=(DG_TUNE_BLOCK_N=128)
    env "${setting[@]}" timeout -k 5 150 python benchmarks/experiments/masked_draws.py "$draws" "${shapes[@]}" |
      sed "s/^/$side$round /" | tee -a "$OUT/rows.txt"
    [ $# -gt 0 ] && continue
    env "${setting[@]}" JDG_MASKED_M=284,238,199,290 timeout -k 5 60 python benchmarks/experiments/masked_draws.py 1 \
      4x256x4096x7168 | sed "s/^/$side$round /" | tee -a "$OUT/rows.txt"
  done
done
