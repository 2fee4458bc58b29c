#!/usr/bin/env bash
# k_loop unrolled by 2 (k_loop_unroll2.patch) on the families k_loop_unroll.sh did not cover: k-grouped (per-row B
# scales: the loop's longest body) two rounds, and masked over six masked_m draws per shape (masked_draws.py), sides
# alternating. One device call, from the repo root; the patch applies to the kernel before 85f5b0a.
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side u2 benchmarks/experiments/k_loop_unroll2.patch || exit 1
AB_SIDES="u2 old" AB_ROUNDS=2 ab_grouped k_grouped 2>&1 | tee "$OUT/unroll_kgrouped.txt"
for v in old u2; do
  ab_use $v
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 110 python benchmarks/experiments/masked_draws.py 6 2>&1 |
    grep -E " us |rror" | sed "s/^/$v | /"
done | tee "$OUT/unroll_masked_draws.txt"
ab_use old
echo "elapsed $((SECONDS - start)) s"
