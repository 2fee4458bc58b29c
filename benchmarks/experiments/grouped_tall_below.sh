#!/usr/bin/env bash
# Step 12 under its 384-row bound (NOTES 67): groups of ~220-400 rows per M / G, with the model's tiles and forced
# 256- and 128-row ones. If 256 wins down to ~300 rows, kGroupedTallMinRows comes down. Run in session 32 (NOTES
# 67): mixed by N and K, so the bound stayed.
#     bash benchmarks/experiments/grouped_tall_below.sh     (one device call)
exec bash "$(dirname "$0")/grouped_block_m.sh" contiguous=32,224,7168,7168 contiguous=24,320,4096,7168 \
  contiguous=16,320,7168,2048 contiguous=24,288,7168,4096
