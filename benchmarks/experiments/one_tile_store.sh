#!/usr/bin/env bash
# Does the TMA store pay where a CTA has one or two tiles (benchmarks/NOTES.md 61)? NOTES 60 found it costing 128 x 160
# tiles 3-6% there (the stage its staging tile takes, nothing to overlap). These rows take 64-multiple tiles, whose
# default is the store wherever it applies: unset / DG_TUNE_TMA_STORE=0 alternating, two rounds (same build).
#   bash benchmarks/experiments/one_tile_store.sh     (one device call, ~4 min)
. "$(dirname "$0")/prelude.sh"
build
rows=(128,24576,1536 128,7168,16384 128,7168,2048 256,7168,2048 512,4096,7168 256,7168,7168 768,2048,7168
      1024,4096,7168 384,4096,16384 512,7168,2048 256,24576,1536 1024,7168,1024 256,4096,4096)
ab DG_TUNE_TMA_STORE 0 python benchmarks/experiments/dense_rows.py "${rows[@]}" 2>&1 | grep -E "^#|^ *[0-9]" |
  tee "$OUT/one_tile_ab.txt"
