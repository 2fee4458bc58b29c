#!/usr/bin/env bash
# Masked GEMMs at decode sizes (many experts, few tokens each: memory-bound on the weights), kernel time and GB/s
# (benchmarks/NOTES.md 62), after the table's write flush.   bash benchmarks/experiments/masked_decode.sh  (~3 min)
. "$(dirname "$0")/prelude.sh"
build
shapes=(masked=16,32,4096,7168 masked=32,16,4096,7168 masked=64,8,2048,7168 masked=16,64,4096,7168
        masked=8,64,7168,2048 masked=32,32,7168,2048 masked=8,128,4096,7168)
DG_PRINT_CONFIGS=1 timeout -k 5 200 python benchmarks/experiments/grouped_rows.py "${shapes[@]}" 2>&1 |
  grep -E "grouped|masked" | tee "$OUT/masked_decode.txt"
