#!/usr/bin/env bash
# Step 12's threshold for contiguous groups (256-row tiles from 384 rows where the segment walk is on, K >= 4096):
# moe_n192.sh found 128-row tiles faster at K = 4096 on groups of 512-1024 rows, 256-row ones faster on 2048 (NOTES
# 87). The pick against DG_TUNE_BLOCK_M=128, contiguous only, even draws, groups of 384-2048 rows (G x rows ~ 12288)
# at K = 4096 / 5120 / 7168 and N = 2048 / 4096 / 7168.
#   bash benchmarks/experiments/moe_tall_rows.sh
. "$(dirname "$0")/prelude.sh"
build
layers=()
for k in 4096 5120 7168; do for n in 2048 4096 7168; do for rows in 384 768 1024 1536 2048; do
  g=$((12288 / rows)); [ $g -lt 4 ] && g=4
  layers+=("r${rows}n${n}k${k}=$g,$((g * rows)),$n,$k")
done; done; done
for run in default bm128; do
  env=(); [ $run = bm128 ] && env=(DG_TUNE_BLOCK_M=128)
  env "${env[@]}" timeout -k 5 280 python benchmarks/experiments/moe_models.py $run --even --contiguous-only \
    "${layers[@]}" 2>&1 | grep -vE "^(W|I)[0-9]{4}|absl" | tee -a "$OUT/moe_tall_rows.txt"
done
