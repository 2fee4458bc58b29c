#!/usr/bin/env bash
# The grid of 128 CTAs where it takes as many rounds as 132 (NOTES 76; NOTES 49's balanced grid, measured on older
# kernels), the configuration otherwise the same: dense M = 4096 rows two rounds, k-grouped rows one, 128 / 132
# alternating. One device call, from the repo root: bash benchmarks/experiments/grid_128.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/grid_cache
rows=(4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,24576,1536 4096,32768,512 4096,7000,7000)
for round in 1 2; do for sms in 128 132; do
  timeout -k 5 100 python benchmarks/experiments/sms_rows.py $sms dense_rows.py "${rows[@]}" 2>&1 |
    grep -E " us |rror" | sed "s/^/sms=$sms r$round /"
done; done | tee "$OUT/grid_dense.txt"
for sms in 128 132; do
  timeout -k 5 150 python benchmarks/experiments/sms_rows.py $sms grouped_rows.py k_grouped 2>&1 |
    grep -E " us |rror" | sed "s/^/sms=$sms /"
done | tee "$OUT/grid_k_grouped.txt"
echo "elapsed $((SECONDS - start)) s"
