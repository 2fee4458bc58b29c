#!/usr/bin/env bash
# The operand maps' L2 promotion, A and B apart (l2_promotion_ab.patch: DG_TUNE_L2_PROMOTION_A / _B, 256 bytes by
# default, 0 = none): NOTES 70 saw 128 x 4096 x 7168 1.8% faster with every map unpromoted and 64 x 7168 x 16384 1%
# slower. Settings A/B: 256/256 (now), 0/256, 256/0, 0/0, alternating, two rounds (NOTES 71).
# One device call, from the repo root: bash benchmarks/experiments/l2_promotion_ab.sh
set -uo pipefail
git apply benchmarks/experiments/l2_promotion_ab.patch || exit 1
. benchmarks/experiments/ab_headers.sh
ab_setup
shapes=${SHAPES:-"128,4096,7168 64,7168,16384 64,4096,7168 128,7168,16384 128,2112,7168 64,2112,7168
  4096,7168,16384 4096,2112,7168"}
for round in 1 2; do
  for ab in 256/256 0/256 256/0 0/0; do
    # shellcheck disable=SC2086  # the shapes are words
    DG_TUNE_L2_PROMOTION_A=${ab%/*} DG_TUNE_L2_PROMOTION_B=${ab#*/} timeout -k 5 100 \
      python benchmarks/experiments/dense_rows.py $shapes 2>&1 | grep -E " us |rror" | sed "s@^@$ab r$round @"
  done
done | tee "$OUT/ab.txt"
echo "elapsed $((SECONDS - start)) s"
