#!/usr/bin/env bash
# The balanced grid (balanced_grid.patch: heuristics step 11, as few CTAs as take the same number of rounds, dense
# and k-grouped; measured, not taken: NOTES 49) against the full grid (DG_TUNE_BALANCED_GRID=0), alternating, three
# rounds of the dense M = 4096 rows and one of the k-grouped rows; then the dense and grouped GPU test files with it.
# One device call: bash benchmarks/experiments/balanced_grid.sh
set -uo pipefail
git apply benchmarks/experiments/balanced_grid.patch || exit 1
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/balanced_cache
side() { if [ "$1" = balanced ]; then unset DG_TUNE_BALANCED_GRID; else export DG_TUNE_BALANCED_GRID=0; fi; }
rows=(4096,2112,7168 4096,24576,1536 4096,32768,512 4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,7000,7000)
for round in 1 2 3; do
  for s in balanced full; do
    side $s
    timeout -k 5 100 python benchmarks/experiments/dense_rows.py "${rows[@]}" 2>&1 | grep -E " us |rror" |
      sed "s/^/$s r$round /"
  done
done 2>&1 | tee "$OUT/balanced_dense.txt"
for s in balanced full; do
  side $s
  timeout -k 5 150 python benchmarks/experiments/grouped_rows.py k_grouped 2>&1 | grep -E " us |rror" | sed "s/^/$s /"
done 2>&1 | tee "$OUT/balanced_k_grouped.txt"
unset DG_TUNE_BALANCED_GRID
echo "A/B done at $((SECONDS - start)) s"
# The GPU test files with the balanced grid (the patch's default).
ab_tests dense tests/test_gpu_dense.py &
ab_tests grouped tests/test_gpu_grouped.py &
wait
echo "elapsed $((SECONDS - start)) s"
git apply -R benchmarks/experiments/balanced_grid.patch
