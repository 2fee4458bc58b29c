#!/usr/bin/env bash
# B's map without L2 promotion (l2_promotion_ab.patch, DG_TUNE_L2_PROMOTION_B=0) against 256 bytes on the grouped
# rows that stream B (masked, contiguous) and the small-M dense rows, one round, same call (NOTES 71).
# One device call, from the repo root: bash benchmarks/experiments/l2_promotion_b.sh
set -uo pipefail
git apply benchmarks/experiments/l2_promotion_ab.patch || exit 1
. benchmarks/experiments/ab_headers.sh
ab_setup
for b in 256 0; do
  DG_TUNE_L2_PROMOTION_B=$b timeout -k 5 60 python benchmarks/experiments/dense_rows.py 128,4096,7168 128,24576,1536 \
    64,24576,1536 128,7168,2048 64,32768,512 2>&1 | grep -E " us |rror" | sed "s@^@b$b @"
  DG_TUNE_L2_PROMOTION_B=$b timeout -k 5 100 python benchmarks/experiments/grouped_rows.py masked contiguous 2>&1 |
    grep -E " us |rror" | sed "s@^@b$b @"
done | tee "$OUT/ab.txt"
echo "elapsed $((SECONDS - start)) s"
