#!/usr/bin/env bash
# Step 12's edges (NOTES 66 left them unmeasured): groups of 256 / 384 rows over K = 7168, and groups of 512 / 1024
# rows over K = 2048 (contiguous there: the fixed grid, whose 256-row tiles straddle experts), with the model's tiles,
# forced 256-row and forced 128-row ones. If 256 wins there too, step 12's bounds (kGroupedTallMinRows, K >= 4096)
# widen; if 128 wins, they stay. Run in session 32 (NOTES 67): ragged from K = 2048 and contiguous from 384 rows.
#     bash benchmarks/experiments/grouped_tall_edges.sh     (one device call)
exec bash "$(dirname "$0")/grouped_block_m.sh" contiguous=32,256,7168,7168 contiguous=16,384,7168,7168 \
  contiguous=16,256,4096,7168 contiguous=8,512,7168,2048 contiguous=8,1024,4096,2048
