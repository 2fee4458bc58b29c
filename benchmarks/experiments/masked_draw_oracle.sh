#!/usr/bin/env bash
# Every masked tile of 128 or 256 rows forced on masked_draws.py's nine shapes over draws 0-5 (NOTES 95: on these
# draws the faster of 128 x 192 and the model's pick changed by draw, by up to 39%): how much faster than the model's
# pick would a kernel be that chose its tile per launch from masked_m (which only the device sees)? An upper bound for
# that design: per draw the fastest of these tiles against the model's.
# One device call (estimated at 4 minutes): no rebuild; the model, then 128 x 128 / 160 / 192 and 256 x 128 forced
# (DG_TUNE_BLOCK_M / _N; the tail split where the model would take it: K >= 4096), one round each.
# Predicted: per shape 2-8% (NOTES 95's two sides alone gave 2.3-7.7% on eight of nine shapes).
#   bash benchmarks/experiments/masked_draw_oracle.sh
. "$(dirname "$0")/prelude.sh"
build
settings=("model:" "128x128:DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128" "128x160:DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=160"
          "128x192:DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192" "256x128:DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128")
for setting in "${settings[@]}"; do
  env ${setting#*:} timeout -k 5 120 python benchmarks/experiments/masked_draws.py 6 2>&1 |
    grep -vE "^(W|I)[0-9]{4}|absl" | sed "s/^/${setting%%:*} /" | tee -a "$OUT/rows.txt"
done
