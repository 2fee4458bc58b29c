#!/usr/bin/env bash
# The next tile looked up as each tile starts (NOTES 79; next_tile_ahead.patch, applied to the device's copy):
# tile_gaps.py put ~520 cycles of the next pass's setup (integer divisions of the tile lookup, in dependent chains)
# between tiles, where the tensor cores idle. Measured, not taken. One device call, from the repo root (old side:
# HEAD's cuda/): GPU tests with it (dense; contiguous and masked), then dense rows of 4 to 56 K blocks per tile, new /
# old alternating, two rounds.
#   bash benchmarks/experiments/next_tile_ahead.sh
# Prepared, not run: whether the lookup left the boundary at all (tile_gaps.sh's timeline with the patch applied; if
# the setup part is gone and the gap did not shrink by it, something else fills the boundary):
#   bash benchmarks/experiments/next_tile_ahead.sh gaps
set -uo pipefail
git apply benchmarks/experiments/next_tile_ahead.patch || { echo "the patch does not apply"; exit 1; }
if [ "${1:-}" = gaps ]; then exec bash benchmarks/experiments/tile_gaps.sh; fi
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare
JDG_TEST_LIMIT=80 ab_tests dense tests/test_gpu_dense.py -x
JDG_TEST_LIMIT=50 ab_tests grouped tests/test_gpu_grouped.py -x -k "contiguous or masked"
ab_dense 2 4096,7168,2048 4096,32768,512 4096,24576,1536 4096,4096,7168 | tee "$OUT/next_tile_ahead.txt"
echo "elapsed $((SECONDS - start)) s"
