#!/usr/bin/env bash
# NOTES 61's rule for contiguous and ragged GEMMs of one tile per CTA: the register epilogue and the stage it leaves
# (the default since NOTES 61) against the TMA store (DG_TUNE_TMA_STORE=1, the default before), two rounds.
#   bash benchmarks/experiments/grouped_one_tile.sh     (one device call, ~3 min)
. "$(dirname "$0")/prelude.sh"
build
shapes=(contiguous=1,1024,2048,2048 contiguous=1,1024,4096,2048 contiguous=1,1024,4096,7168 contiguous=1,128,7168,2048
        contiguous=2,64,7168,2048 contiguous=1,512,7168,7168)
ab DG_TUNE_TMA_STORE 1 python benchmarks/experiments/grouped_rows.py "${shapes[@]}" 2>&1 | grep -E "^#|grouped" |
  tee "$OUT/grouped_one_tile.txt"
