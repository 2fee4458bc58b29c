#!/usr/bin/env bash
# Every tensor map's L2 promotion (operands, scales, D; l2_promotion.patch: DG_TUNE_L2_PROMOTION 0 / 128 / 256
# bytes, the default 256) on dense rows of every tile family, same call, the settings alternating, two rounds
# (NOTES 70).
# One device call, from the repo root: bash benchmarks/experiments/l2_promotion.sh
set -uo pipefail
git apply benchmarks/experiments/l2_promotion.patch || exit 1
. benchmarks/experiments/ab_headers.sh
ab_setup
shapes=${SHAPES:-"4096,7168,16384 4096,2112,7168 4096,24576,1536 4096,7168,2048 128,4096,7168 64,7168,16384
  128,2112,7168"}
for round in 1 2; do
  for p in 256 128 0; do
    # shellcheck disable=SC2086  # the shapes are words
    DG_TUNE_L2_PROMOTION=$p timeout -k 5 120 python benchmarks/experiments/dense_rows.py $shapes 2>&1 |
      grep -E " us |rror" | sed "s/^/l2p$p r$round /"
  done
done | tee "$OUT/ab.txt"
echo "elapsed $((SECONDS - start)) s"
