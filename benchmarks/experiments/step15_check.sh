#!/usr/bin/env bash
# Step 15 (heuristics.cc) landed: the dense GPU tests (4096 x 2112 x 7168 among them, now without clusters on 118
# CTAs) and the rows it changes, as chosen by default, two rounds (against balanced_192.sh's pick132, NOTES 80).
#   bash benchmarks/experiments/step15_check.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-step15 DG_PRINT_CONFIGS=1
JDG_TEST_LIMIT=170 ab_tests dense tests/test_gpu_dense.py
rows=(4096,2112,7168 8192,2112,7168 16384,2112,7168 4096,2112,4096 4096,1536,7168)
for round in 1 2; do
  timeout -k 5 90 python benchmarks/experiments/dense_rows.py "${rows[@]}" 2>&1 | grep -E " us |rror|jax_deepgemm:" |
    sed "s/^/default r$round | /"
done | tee "$OUT/step15_rows.txt"
echo "elapsed $((SECONDS - start)) s"
