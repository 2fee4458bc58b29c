#!/usr/bin/env bash
# The next tile's first K block issued before the epilogue (epilogue_overlap.patch; NOTES 81, measured, not taken):
# at a tile boundary both warpgroups run their epilogues (~900 cycles, NOTES 79) with the tensor cores idle. The
# patch issues the next tile's first K block's wave-0 wgmmas (into `acc`, free after the last promotion) before the
# epilogue, where the kernel has two waves per warpgroup, one accumulator and one pass per tile (dense and masked
# 256-row tiles, no K split or tail split); the K loop then skips that issue. The issue is on every path (ptxas drains
# the wgmmas where paths with and without one in flight meet: a first form that issued only where the wave is
# computed ran them before the epilogue, not beside it). One device call: dense rows, new / old alternating, two
# rounds (the 128 x 192 rows are untouched: controls); then the dense and masked GPU tests with the patch.
#   bash benchmarks/experiments/epilogue_overlap.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side new benchmarks/experiments/epilogue_overlap.patch || exit 1
ab_dense 2 4096,32768,512 4096,7168,2048 4096,24576,1536 4096,4096,7168 4096,7168,16384 4096,2112,7168 \
  4096,7000,7000 2048,2112,7168 | tee "$OUT/epilogue_overlap.txt"
ab_use new
DG_JIT_CACHE_DIR=/tmp/ab_cache_new JDG_TEST_LIMIT=200 ab_tests dense tests/test_gpu_dense.py
DG_JIT_CACHE_DIR=/tmp/ab_cache_new JDG_TEST_LIMIT=120 ab_tests masked tests/test_gpu_grouped.py -k masked
ab_use old
echo "elapsed $((SECONDS - start)) s"
