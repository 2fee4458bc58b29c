#!/usr/bin/env bash
# The contiguous tile ids' warp (TileIds: static contiguous tiles read their expert ids from shared memory, loaded a
# tile ahead by the producer warpgroup's second warp) against the headers without it. The patch goes on the device
# copy before the build, whose heuristics then give contiguous 256-row tiles the slot's 1 KB of barrier area (no
# stage count changes; side old's kernels just leave it unused). Two rounds of the rows of NOTES 141, ragged along as
# the control, then the contiguous GPU cases of the grouped and configs files with the ids' warp.
# Predicted: contiguous -1% to -2% at K = 7168 (256 x 128, segment walk; static ragged on the same tiles was 1-1.7%
# ahead, NOTES 138), -2% to -4% at K = 2048 (shorter tiles: the switch weighs more); ragged level.
#   bash benchmarks/experiments/contiguous_tile_ids.sh      one device call, ~6 min
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_patched benchmarks/experiments/contiguous_tile_ids.patch
ab_reversed benchmarks/experiments/contiguous_tile_ids.patch
shapes=(contiguous contiguous=16,1024,4096,2048 contiguous=32,512,7168,2048 contiguous=8,2048,4096,7168)
ab_side_rounds 2 100 benchmarks/experiments/grouped_rows.py "${shapes[@]}"
ab_side_tests new contiguous 14 "${JDG_IDS_TEST_LIMIT:-220}" tests/test_gpu_grouped.py tests/test_gpu_configs.py
ab_use new
ab_pack
echo "done in $((SECONDS - start)) s"
