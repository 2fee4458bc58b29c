#!/usr/bin/env bash
# A narrower form of NOTES 95's step 17 (masked_mid_n4096.patch, against f2bc2ef's heuristics.cc): masked groups of
# 129-511 expected rows over K that the tail split takes (>= 4096) and N >= 4096 take 128 x 192 tiles (with the tail
# split), against the picks before (128 x 128). Why (NOTES 151, masked_draw_oracle.sh at f2bc2ef): over six draws the
# best static tile on 4 x 256 x 4096 x 7168 was 128 x 192 (-9.3%), and 95's held-out loser was at N = 2048 (16 x 192
# x 2048 x 7168, +5.8%), which N >= 4096 leaves out. The bound is empirical: 192-wide tiles pad N = 4096 by the same
# 3% of columns as N = 2048, and why that shape lost is not measured.
# In sample (their 128 x 192 times informed the rule): 4 x 256 x 4096 x 7168 and 95's held-out shapes at N >= 4096.
# Held out: seven shapes not measured before. Controls: 16 x 192 x 2048 x 7168, 2 x 512 x 4096 x 7168 and 8 x 128 x
# 4096 x 7168 (outside the rule).
# Predicted (written before the run): 4 x 256 x 4096 x 7168 -6% to -9%; the other in-sample shapes -4% to +1% (95:
# -3.6%, -1.1%, +0.4%, +0.7%); held out -2% on average, -6% to +3% per shape; controls within 1%.
# (Run in session 105, NOTES 152. The rule sees the hint, 1.2 x nominal: 4 x 448's 537 is step 6's, so not moved, and
# the control 8 x 128's 153 is inside the rule.)
# One call (estimated at 6-8 minutes): two rounds, one build per side, masked_draws.py over four draws.
#   bash benchmarks/experiments/masked_mid_n4096.sh; python benchmarks/experiments/masked_ab.py $OUT/rows.txt
. "$(dirname "$0")/prelude.sh"
masked_rows() {
  timeout -k 5 200 python benchmarks/experiments/masked_draws.py 4 4x256x4096x7168 8x256x4096x7168 8x320x7168x4096 \
    32x160x4096x7168 4x384x7168x4096 8x192x4096x7168 4x448x4096x7168 16x160x7168x4096 6x300x5120x5120 \
    12x224x6144x4096 32x144x4096x7168 8x400x4096x4096 16x192x2048x7168 2x512x4096x7168 8x128x4096x7168 | sed "s/^/$1 /"
}
patch_rounds "$(dirname "$0")/masked_mid_n4096.patch" masked_rows
