#!/usr/bin/env bash
# Heuristics step 17 as prepared (masked_mid_groups.patch, against 6d8a8f9's heuristics.cc): masked groups of 129-511
# expected rows over K >= 4096 (the tail split's) search 128-row tiles up to 192 wide over unrounded waves, against the
# picks before (128 x 128). Why (NOTES 95, masked_draw_oracle.sh): over six draws the best static tile there was 128 x
# 192, 4 x 256 x 4096 x 7168 -6.4% and 8 x 128 x 4096 x 7168 -1.6% against 128 x 128; elsewhere it was not (16 x 64:
# +3.7%, B's stream; >= 512 rows: 256 x 128; K = 2048, no tail split: within 2% either way).
# Predicted: those two -6% / -1.5%, mixtral_up_dec -3%; the held-out shapes in the range -1% to -6%; the controls
# (2 x 512 and 16 x 64 x 4096 x 7168, the decode rows of 64-row tiles) unchanged.
# One call (estimated at 5-6 minutes): two rounds, one build per side, masked_draws.py over six draws.
#   bash benchmarks/experiments/masked_mid_groups.sh
. "$(dirname "$0")/prelude.sh"
masked_rows() {
  timeout -k 5 150 python benchmarks/experiments/masked_draws.py 6 4x256x4096x7168 8x128x4096x7168 8x256x4096x7168 \
    16x192x2048x7168 4x384x7168x4096 32x160x4096x7168 8x320x7168x4096 8x112x7168x4096 2x512x4096x7168 \
    16x64x4096x7168 | sed "s/^/$1 /"
  timeout -k 5 100 python benchmarks/experiments/moe_models.py "$1" --masked dsv3_up_dec mixtral_up_dec
}
patch_rounds "$(dirname "$0")/masked_mid_groups.patch" masked_rows
