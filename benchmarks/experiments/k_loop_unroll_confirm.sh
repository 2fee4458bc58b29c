#!/usr/bin/env bash
# Second look at k_loop_unroll.sh's grouped rows (one run per side there: unrolled -0.5% to -1.8% on contiguous,
# dense within +-0.5% but 24576 x 1536 -1.2% with u3): contiguous / ragged rows, sides alternating, two rounds,
# then the two dense rows that moved most. One device call, from the repo root; the patches apply to the kernel
# before 85f5b0a.
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
rm -rf /tmp/ab_old_cuda /tmp/ab_u2_cuda /tmp/ab_u3_cuda && cp -r cuda /tmp/ab_old_cuda
for u in 2 3; do
  git apply "benchmarks/experiments/k_loop_unroll$u.patch" || exit 1
  cp -r cuda "/tmp/ab_u${u}_cuda"; ab_use old
done
for round in 1 2; do for v in u3 u2 old; do
  ab_use $v
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 150 python benchmarks/experiments/grouped_rows.py contiguous \
    2>&1 | grep -E " us |rror" | sed "s/^/$v r$round /"
done; done | tee "$OUT/unroll_contiguous.txt"
for round in 1 2; do for v in u3 u2 old; do
  ab_use $v
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 100 python benchmarks/experiments/dense_rows.py 4096,7168,2048 \
    4096,24576,1536 4096,32768,512 2>&1 | grep -E " us |rror" | sed "s/^/$v r$round /"
done; done | tee "$OUT/unroll_dense2.txt"
ab_use old
echo "elapsed $((SECONDS - start)) s"
