#!/usr/bin/env bash
# Should ragged groups of 384+ rows keep step 12's 256 x 128 tiles now that its 128-row passes read their A scales at
# a per-tile index (NOTES 92: ragged 128 x 192 -4.1%)? Step 12 was measured (NOTES 66, 67, H100) when ragged's
# 128 x 192 K loop ran ~9% behind contiguous's on the same tiles (NOTES 91); contiguous keeps 128 x 192 on most small
# groups (Qwen3-235B up: contiguous 193 us in 128 x 192, ragged 209 in 256 x 128, NOTES 90). This script times
# ragged rows as the model picks them against DG_TUNE_BLOCK_M=128 (the cost then picks the width, step 12 off), two
# rounds, the sides alternating, one build; then the contiguous rows once, for the gap. Two sets, one device call each
# (estimated at 4-6 minutes each):
#   models  published models' layers whose ragged groups take step 12's tiles (moe_models.py names)
#   step12  step 12's measured ragged rows (heuristics.cc), groups drawn in [0.7, 1.3] x nominal
# Predicted: 128-row tiles ~3% faster on Qwen3-235B up (~202 us: 209.8 at 128 x 192 before, NOTES 91, less 4%),
# within 5% of contiguous there; still slower where NOTES 89's grid had them 3.8-11.6% slower (20 of 24 rows, groups
# of 384-2048 rows), by about 4 points less.
#   bash benchmarks/experiments/ragged_128_rows.sh models|step12
# Measured (`models`, NOTES 93, H200, 2026-11-29): Qwen3-235B up 200.9 us in 128 x 192 (-2.6% / -3.1%), DeepSeek-V3 down
# at 16k +1.8% / +2.0%; below step 12, where the cost took 256 x 128 for M / G = 256, -4.2% to -9.6% at K >= 2048.
. "$(dirname "$0")/prelude.sh"
build
case "${1:-models}" in
  models) layers=(qwen235_up qwen235_down qwen30_up qwen30_down gptoss_up gptoss_down dsv3_down_16k) ;;
  step12) layers=(r512n7168k2048=8,4096,7168,2048 r1024n4096k2048=8,8192,4096,2048 r385n7168k2048=16,6160,7168,2048
                  r420n4096k4096=16,6720,4096,4096 r448n7168k4096=12,5376,7168,4096 r512n4096k7168=16,8192,4096,7168) ;;
  *) echo "usage: ragged_128_rows.sh models|step12"; exit 2 ;;
esac
run() {  # label, moe_models.py options, then an optional environment setting
  env ${3:+"$3"} timeout -k 5 130 python benchmarks/experiments/moe_models.py "$1" "$2" "${layers[@]}" 2>&1 |
    grep -vE "^(W|I)[0-9]{4}|absl" | tee -a "$OUT/rows.txt"
}
for round in 1 2; do
  run "default$round" --ragged-only
  run "bm128_$round" --ragged-only DG_TUNE_BLOCK_M=128
done
run contiguous --contiguous-only
