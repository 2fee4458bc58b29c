#!/usr/bin/env bash
# The one-accumulator K loop (k_loop: 256-row two-wave tiles, unpipelined 128-row tiles) unrolled by 2 and by 3
# (k_loop_unroll{2,3}.patch: `#pragma unroll N` on its K-block loop; 168 registers, no spills at dense 256 x 128;
# SASS at K = 2048 2473 -> 3273 / 4153 lines). Why: NOTES 51 found the loop's schedule, not its code size, worth
# 2-5% (dead paths and one fewer loop copy both ran slower); unrolled, ptxas may overlap one K block's loop tail
# (release, counters, next barrier wait) with the next one's issue, the ~125-cycle gap NOTES 16 measured after the
# second wave. Same run, sides alternating (old: the headers as sent; u2, u3):
#   bash benchmarks/experiments/k_loop_unroll.sh          dense M = 4096 rows two rounds, the contiguous and masked
#                                                         rows once per side, then test_gpu_dense.py with u2
#   bash benchmarks/experiments/k_loop_unroll.sh confirm  the contiguous / ragged rows two more rounds and three dense
#                                                         rows two rounds, sides in the reverse order
# One device call each, from the repo root (the patches apply to the kernel before 85f5b0a, which took u2 for
# 128x128 B scales).
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
for u in 2 3; do ab_side "u$u" "benchmarks/experiments/k_loop_unroll$u.patch" || exit 1; done
if [ "${1:-}" = confirm ]; then
  export AB_SIDES="u3 u2 old"
  AB_ROUNDS=2 ab_grouped contiguous 2>&1 | tee "$OUT/unroll_contiguous.txt"
  ab_dense 2 4096,7168,2048 4096,24576,1536 4096,32768,512 2>&1 | tee "$OUT/unroll_dense2.txt"
else
  export AB_SIDES="old u2 u3"
  ab_dense 2 4096,7168,2048 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 2048,2112,7168 2>&1 |
    tee "$OUT/unroll_dense.txt"
  ab_grouped contiguous masked 2>&1 | tee "$OUT/unroll_grouped.txt"
  ab_use u2
  ab_tests dense_u2 tests/test_gpu_dense.py
fi
ab_use old
echo "elapsed $((SECONDS - start)) s"
