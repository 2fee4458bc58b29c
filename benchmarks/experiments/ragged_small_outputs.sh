#!/usr/bin/env bash
# Step 12 for ragged groups (256-row tiles from 384 rows per group at K >= 2048, whatever their output): NOTES 87 gave
# contiguous groups over K < 6144 an output bound (128-row tiles up to 4 Mi elements per group) and left ragged alone.
# The pick against DG_TUNE_BLOCK_M=128, ragged only, two rounds: a grid of even draws (K 2048-5120; groups of 384-2048
# rows; N 2048-7168; one row over the bound) and the published layers whose ragged pick is 256 rows (both draws);
# then the default's contiguous rows on the grid, one round, for ragged against contiguous. Logs under $OUT.
#   bash benchmarks/experiments/ragged_small_outputs.sh
. "$(dirname "$0")/prelude.sh"
build
grid=()
for k in 2048 3072 4096 5120; do
  for rn in 384,2048 1024,2048 512,3072 1024,4096 512,7168 2048,4096; do
    rows=${rn%,*} n=${rn#*,} g=$((12288 / rows)); [ $g -lt 4 ] && g=4
    grid+=("r${rows}n${n}k${k}=$g,$((g * rows)),$n,$k")
  done
done
models=(qwen235_up qwen235_down qwen30_up qwen30_down gptoss_up gptoss_down)
rows() {  # label, setting (or -), moe_models.py options...
  local label=$1 setting=$2
  shift 2
  local env=()
  [ "$setting" != - ] && env=("$setting")
  env "${env[@]}" timeout -k 5 200 python benchmarks/experiments/moe_models.py "$label" "$@" 2>&1 \
    | grep -vE "^(W|I)[0-9]{4}|absl" | tee -a "$OUT/ragged_small_outputs.txt"
}
for round in 1 2; do
  date -u
  rows "default$round" - --ragged-only --even "${grid[@]}"
  rows "bm128_$round" DG_TUNE_BLOCK_M=128 --ragged-only --even "${grid[@]}"
  rows "default$round" - --ragged-only "${models[@]}"
  rows "bm128_$round" DG_TUNE_BLOCK_M=128 --ragged-only "${models[@]}"
done
date -u
rows contig - --contiguous-only --even "${grid[@]}"
date -u
