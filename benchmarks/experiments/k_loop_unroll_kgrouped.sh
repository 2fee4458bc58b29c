#!/usr/bin/env bash
# k_loop unrolled by 2 (k_loop_unroll2.patch) on the families k_loop_unroll.sh did not cover: k-grouped (per-row B
# scales: the loop's longest body) two rounds, and masked over six masked_m draws per shape (masked_draws.py), sides
# alternating. One device call, from the repo root; the patch applies to the kernel before 85f5b0a.
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
rm -rf /tmp/ab_old_cuda /tmp/ab_u2_cuda && cp -r cuda /tmp/ab_old_cuda
git apply benchmarks/experiments/k_loop_unroll2.patch || exit 1
cp -r cuda /tmp/ab_u2_cuda
for round in 1 2; do for v in u2 old; do
  ab_use $v
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 150 python benchmarks/experiments/grouped_rows.py k_grouped \
    2>&1 | grep -E " us |rror" | sed "s/^/$v r$round /"
done; done | tee "$OUT/unroll_kgrouped.txt"
for v in old u2; do
  ab_use $v
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 110 python benchmarks/experiments/masked_draws.py 6 2>&1 |
    grep -E " us |rror" | sed "s/^/$v | /"
done | tee "$OUT/unroll_masked_draws.txt"
ab_use old
echo "elapsed $((SECONDS - start)) s"
