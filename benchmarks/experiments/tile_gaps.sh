#!/usr/bin/env bash
# What a tile boundary costs the 256 x 128 two-wave loop (NOTES 79; tile_gaps.py): the DG_PROFILE_WAITS build's K
# loop timeline of CTAs 0 and 1 on dense rows of 4, 16 and 128 K blocks per tile. One device call, from the repo root:
#   bash benchmarks/experiments/tile_gaps.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-tile-gaps DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=3
for shape in 4096,7168,2048 4096,32768,512 4096,7168,16384; do
  echo "## dense $shape"
  timeout -k 5 90 python tools/profile_one.py dense "$shape" >"$OUT/dense_$shape.log" 2>&1
  grep -m1 "jax_deepgemm: fp8_gemm" "$OUT/dense_$shape.log" | cut -c1-200
  python benchmarks/experiments/tile_gaps.py <"$OUT/dense_$shape.log"
  { echo "## dense $shape"; cat "$OUT/dense_$shape.log"; } | python tools/waits_summary.py | tail -1 | cut -c1-300
done 2>&1 | tee "$OUT/tile_gaps.txt"
echo "elapsed $((SECONDS - start)) s"
