#!/usr/bin/env bash
# Step 20 (128 x 192 masked tiles, NOTES 152) over more masked_m draws: its A/B ran four draws per shape, and the
# benchmark table's one draw of 4 x 256 x 4096 x 7168 (masked_m 284, 238, 199, 290: 10 M blocks) then ran 7.4% slower
# than the table at 642d811, where the A/B's one 10-block draw was +1.3%. Here the default (step 20's 128 x 192)
# against DG_TUNE_BLOCK_N=128 (the tile before it: forcing the width takes step 6's 128 x 128 search), one build, two
# rounds: twelve draws of three moved shapes, and the table's draw.
# Predicted: the table's draw +2% to +8% (a 10-block draw: 220 tiles of 192 leave 88 in the last round, more than the
# tail split evens out over 132 SMs, where 320 tiles of 128 leave 56); over the twelve draws 4 x 256 x 4096 x 7168
# -3% to -6% geometric mean (9- and 11-block draws faster, 10-block ones level or slower), the others -2% to -6%.
#   bash benchmarks/experiments/masked_mid_draws.sh; python benchmarks/experiments/masked_ab.py $OUT/rows.txt
. "$(dirname "$0")/prelude.sh"
build
for round in 1 2; do
  for side in new old; do
    setting=()
    [ "$side" = old ] && setting=(DG_TUNE_BLOCK_N=128)
    env "${setting[@]}" timeout -k 5 150 python benchmarks/experiments/masked_draws.py 12 4x256x4096x7168 \
      8x256x4096x7168 12x224x6144x4096 | sed "s/^/$side$round /" | tee -a "$OUT/rows.txt"
    env "${setting[@]}" JDG_MASKED_M=284,238,199,290 timeout -k 5 60 python benchmarks/experiments/masked_draws.py 1 \
      4x256x4096x7168 | sed "s/^/$side$round /" | tee -a "$OUT/rows.txt"
  done
done
