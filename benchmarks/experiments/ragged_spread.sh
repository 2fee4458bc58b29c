#!/usr/bin/env bash
# ragged_spread.patch: ragged groups of fewer than 384 rows over K >= 2048 count the M blocks expected with group
# sizes spread evenly over [0.7, 1.3] x M / G, and every ragged cost takes its waves unrounded (the tile count being
# a guess). Why (NOTES 94): ragged_tile_oracle.sh (H200, 2026-11-29) timed every tile on 22 rows; offline, the
# patch's picks come within 1.3% of the fastest on average (at most 7.1%) where HEAD's do within 3.5% (13.5%).
# One device call (estimated at 6 minutes): HEAD against HEAD + the patch, the package rebuilt for each side, two
# rounds, the sides alternating; both group draws of the moved layers below, including rows that the patch moves
# outside the oracle's set: K = 1536 (qwen235_down even, g32r128 skewed: to 128 x 192) and to 256 x 128 (g8r192,
# g8r384).
# Predicted: the oracle's rows as it timed them (-3% to -10% where HEAD's pick was 5-13% off, +5% on dsv3_up_4k even);
# the others unknown, within a few %.
# The patch is against 6b0b738's ffi/heuristics.cc (step 16, 899cbcd, changed that file since: it no longer applies).
#   bash benchmarks/experiments/ragged_spread.sh
. "$(dirname "$0")/prelude.sh"
layers=(dsv3_up_4k dsv3_down_4k qwen30_up gptoss_up gptoss_down qwen235_down
        r256n2048k4096=16,4096,2048,4096 r128n2048k4096=64,8192,2048,4096
        g32r128n4096k1536=32,4096,4096,1536
        g8r192n7168k2048=8,1536,7168,2048 g8r384n1536k2048=8,3072,1536,2048)
heuristics_patch_rounds "$(dirname "$0")/ragged_spread.patch" "${layers[@]}"
