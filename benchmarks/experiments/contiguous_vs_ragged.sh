#!/usr/bin/env bash
# The contiguous kernel against the ragged one on the same tokens (benchmarks/NOTES.md 63): the table's draw of
# 4 x 8192 x 4096 x 7168, sizes aligned to 256 (the same tiles for both), one group, and the K = 2048 shape, in two
# rounds.     bash benchmarks/experiments/contiguous_vs_ragged.sh     (one device call, ~3 min)
. "$(dirname "$0")/prelude.sh"
build
for round in 1 2; do
  echo "# round $round"
  timeout -k 5 120 python benchmarks/experiments/contiguous_vs_ragged.py 4096,7168 8865,7060,5935,5815 \
    8960,7168,5888,5888 32768 8192,8192,8192,8192 2>&1 | grep sizes
  timeout -k 5 80 python benchmarks/experiments/contiguous_vs_ragged.py 7168,2048 9731,10220,8716,9320 \
    9728,10240,8704,9216 2>&1 | grep sizes
done | tee "$OUT/contiguous_vs_ragged.txt"
