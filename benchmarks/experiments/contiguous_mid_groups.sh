#!/usr/bin/env bash
# Contiguous groups of 512-1024 rows over long K: the model's tiles against forced 256-row ones, which walk segments
# there (heuristics.cc step 11). The model charges 256-row tiles G - 1 extra M blocks for tiles that straddle two
# experts. With the walk no tile straddles, and a segment of an odd block count costs one 128-row tile, about G / 4
# extra on random sizes. So where the model takes 128-row tiles for such groups, 256 may win (NOTES 65, left open).
# Run in session 31 (NOTES 66): 256 won by 3-17%, which step 12 (grouped_tall.sh) now takes; on its own, the
# straddle count would not have changed the picks.
#     bash benchmarks/experiments/contiguous_mid_groups.sh     (one device call)
BLOCK_MS="model 256" exec bash "$(dirname "$0")/grouped_block_m.sh" contiguous=8,1024,7168,7168 \
  contiguous=8,512,7168,7168 contiguous=16,512,4096,7168 contiguous=4,1024,7168,4096
