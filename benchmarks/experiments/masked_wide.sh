#!/usr/bin/env bash
# Masked tiles up to 128 x 192, costed over unrounded waves, and no 256 x 128 (masked_wide.patch, against f18912c's
# heuristics.cc) against the picks before: step 6's at most 128 x 128, and 256 x 128 with the tail split for groups
# of >= 512 rows over K >= 4096.
# Why: masked_tile_oracle.sh (NOTES 95, H200) found 128 x 160 / 192 fastest on seven of the eight masked rows of
# 128-row tiles (table and decode), by 4-18% against the model's pick, and 256 x 128 8% slower than 128 x 128 on the
# two rows that take it. With the tile counts of the masked_m drawn, the model's cost puts the fastest 128-row width
# first on all eight (one tie); the host sees only expected_m, and over unrounded waves the cost takes 128 x 192 there.
# Predicted (that draw): -4% to -15% on six rows, +1% / +2% on two (m1x1024n7168k2048, m4x256n7168k2048).
# One call (estimated at 5-6 minutes): two rounds, one build per side; masked_draws.py's nine shapes over six draws
# each, and moe_models.py's five decode rows.
#   bash benchmarks/experiments/masked_wide.sh
. "$(dirname "$0")/prelude.sh"
masked_rows() {
  timeout -k 5 120 python benchmarks/experiments/masked_draws.py 6 | sed "s/^/$1 /"
  timeout -k 5 100 python benchmarks/experiments/moe_models.py "$1" --masked dsv3_up_dec dsv3_down_dec qwen30_up_dec \
    mixtral_up_dec gptoss_up_dec
}
patch_rounds "$(dirname "$0")/masked_wide.patch" masked_rows
