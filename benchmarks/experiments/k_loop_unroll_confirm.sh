#!/usr/bin/env bash
# Second look at k_loop_unroll.sh's grouped rows (one run per side there: unrolled -0.5% to -1.8% on contiguous,
# dense within +-0.5% but 24576 x 1536 -1.2% with u3): contiguous / ragged rows, sides alternating, two rounds,
# then the two dense rows that moved most. One device call, from the repo root; the patches apply to the kernel
# before 85f5b0a.
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
for u in 2 3; do ab_side "u$u" "benchmarks/experiments/k_loop_unroll$u.patch" || exit 1; done
export AB_SIDES="u3 u2 old"
AB_ROUNDS=2 ab_grouped contiguous 2>&1 | tee "$OUT/unroll_contiguous.txt"
ab_dense 2 4096,7168,2048 4096,24576,1536 4096,32768,512 2>&1 | tee "$OUT/unroll_dense2.txt"
ab_use old
echo "elapsed $((SECONDS - start)) s"
