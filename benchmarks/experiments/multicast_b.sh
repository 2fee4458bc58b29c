#!/usr/bin/env bash
# Dense clusters of 2 that share B (adjacent M blocks of one N block, JDG_MULTICAST_B, DG_TUNE_MULTICAST_B=1)
# against the A-sharing clusters, same call. Correctness first (check_dense.py: poisoned outputs, odd M-block
# counts, M tails, an odd N-block count), then kernel times with clusters forced on both ways, alternating, two
# rounds. One device call, from the repo root: bash benchmarks/experiments/multicast_b.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-mb
DG_TUNE_CLUSTER=2 DG_TUNE_MULTICAST_B=1 DG_PRINT_CONFIGS=1 timeout -k 5 150 python benchmarks/experiments/check_dense.py \
  4096,2112,7168 1000,2112,7168 384,7168,2048 300,4096,512 4096,7168,4096 2176,2112,1536 2>&1 |
  grep -E "check|rror|jax_deepgemm: dense" | tee "$OUT/check.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "check_dense failed: no timing"; exit 1; }
shapes="4096,2112,7168 8192,2112,7168 2048,2112,7168 4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,24576,1536"
for round in 1 2; do
  for mb in 0 1; do
    # shellcheck disable=SC2086  # the shapes are words
    DG_TUNE_CLUSTER=2 DG_TUNE_MULTICAST_B=$mb timeout -k 5 120 python benchmarks/experiments/dense_rows.py $shapes 2>&1 |
      grep -E " us |rror" | sed "s/^/mb$mb r$round /"
  done
done | tee "$OUT/ab.txt"
