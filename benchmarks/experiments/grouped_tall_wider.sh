#!/usr/bin/env bash
# Step 12 widened (NOTES 67): rows the new bounds take into 256 x 128 tiles that no run measured, with the model's
# tiles and with forced 128-row ones (the previous picks): ragged groups of ~385 rows over K = 2048, contiguous ones
# of ~460 rows at N = 4096, K = 7168 and of ~590 rows at K = 4096 (their twins are controls: contiguous at K = 2048
# and ragged at K >= 4096 keep their tiles).
#     bash benchmarks/experiments/grouped_tall_wider.sh     (one device call)
BLOCK_MS="model 128" exec bash "$(dirname "$0")/grouped_block_m.sh" contiguous=16,384,7168,2048 \
  contiguous=16,384,4096,7168 contiguous=8,512,4096,4096
