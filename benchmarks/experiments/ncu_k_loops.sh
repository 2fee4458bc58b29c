#!/usr/bin/env bash
# Nsight Compute stall samples (every 2^5 cycles) of dense kernels whose K loop DeepGEMM runs faster on the same
# tiles or tile count: 128 x 192 with B shared at 4096 x 2112 x 7168 (DeepGEMM's pick too), the split-K 64 x 32
# tiles of 64 x 2112 x 7168 (its 64 x 16 tiles: 132 of them as ours); or the dense shapes given. One device call:
#   bash benchmarks/experiments/ncu_k_loops.sh [M,N,K ...]
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(4096,2112,7168 64,2112,7168)
for s in "${shapes[@]}"; do
  d="$OUT/ncu_dense_${s//,/x}"
  JDG_NCU_SAMPLING=0 bash benchmarks/experiments/run_ncu.sh dense "$s" 2>&1 | tail -30
  python benchmarks/experiments/ncu_stalls.py "$d/ncu_source_sass.csv.gz" 60 >"$d/stalls.txt" 2>&1
  head -75 "$d/stalls.txt"
done
rm -f "$OUT/build.log"  # at most 8 files come back: machine.txt and three per shape
echo "elapsed $((SECONDS - start)) s"
