#!/usr/bin/env bash
# ragged_short_groups.patch (step 16 of ffi/heuristics.cc): ragged groups of fewer than 384 rows take 128-row tiles
# over K >= 2048, and their cost takes its waves unrounded (their tile count being a guess). Why (NOTES 94):
# ragged_tile_oracle.sh (H200, 2026-11-29) timed every tile on 22 rows, ragged_spread.patch's A/B eight more; the
# step's picks come within 1.3% of each row's fastest on average (at most 9.5%), HEAD's within 3.1% (13.5%).
# One device call (estimated at 5 minutes): HEAD against HEAD + the patch, the package rebuilt for each side, two
# rounds, the sides alternating; both group draws of the layers below, which the patch moves (on one draw at least),
# and two it moves that no run measured yet: g16r256n4096k7168 (256 x 128 -> 128 x 192) and g64r128n2880k2880.
# Predicted: the measured rows as measured (-3% to -10% where HEAD's pick was 4-13% off; +5% to +10% on the even
# draws of dsv3_up_4k, r192n4096k7168 and r192n2880k2880); the two new ones within a few %.
# The patch is against 6b0b738's ffi/heuristics.cc (it landed in 899cbcd as step 16: it no longer applies).
#   bash benchmarks/experiments/ragged_short_groups.sh
. "$(dirname "$0")/prelude.sh"
layers=(dsv3_up_4k dsv3_down_4k qwen30_up gptoss_up gptoss_down
        r256n2048k4096=16,4096,2048,4096 r128n2048k4096=64,8192,2048,4096 r192n4096k7168=32,6144,4096,7168
        r192n2880k2880=128,24576,2880,2880 g32r128n4096k1536=32,4096,4096,1536
        g16r256n4096k7168=16,4096,4096,7168 g64r128n2880k2880=64,8192,2880,2880)
heuristics_patch_rounds "$(dirname "$0")/ragged_short_groups.patch" "${layers[@]}"
