#!/usr/bin/env bash
# 128 x 176 tiles (12 N blocks at N = 2112: 384 tiles, 2.91 rounds of 132 CTAs) against the model's 128 x 192
# (352 tiles, 2.67 rounds: the last round's 88 tiles leave 44 CTAs idle), forced through DG_TUNE_*, with and without
# clusters sharing B; two rounds, kernel us. One device call: bash benchmarks/experiments/width176.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/w176_cache
rows=(4096,2112,7168 2048,2112,7168 8192,2112,7168 4096,2112,2048)
run() {  # label, env assignments
  local label=$1; shift
  env "$@" timeout -k 5 100 python benchmarks/experiments/dense_rows.py "${rows[@]}" 2>&1 | grep -E " us |rror" |
    sed "s/^/$label /"
}
for round in 1 2; do
  run "model     r$round"
  run "176 c1    r$round" DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=176 DG_TUNE_CLUSTER=1
  run "176 c2 B  r$round" DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=176 DG_TUNE_CLUSTER=2 DG_TUNE_MULTICAST_B=1
  run "192 c1    r$round" DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 DG_TUNE_CLUSTER=1
done 2>&1 | tee "$OUT/width176.txt"
DG_PRINT_CONFIGS=1 DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=176 DG_TUNE_CLUSTER=2 DG_TUNE_MULTICAST_B=1 \
  python benchmarks/experiments/dense_rows.py 4096,2112,7168 2>&1 | grep -i "config\|fp8_gemm" | head -5
echo "elapsed $((SECONDS - start)) s"
