#!/usr/bin/env bash
# Prepared (NOTES 35, Next): with clusters sharing B, do they now pay where the model takes none?
#  1. 128 x 160 / 192 rows the model leaves unclustered (K < 4096, M < 2048): clusters forced (B shared by default
#     for those tiles) against the model;
#  2. M = 128: two 64-row tiles sharing a B tile (each CTA copies 64 + BLOCK_N / 2 rows per K block, against the
#     model's 128 + 32, or split K's): 64 x 64 / 64 x 32 in clusters sharing B against the model.
# Same build, alternating, two rounds; kernel time only. One device call, from the repo root:
#   bash benchmarks/experiments/cluster_b_scope.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-cbs
rows() {  # label, settings (one word, commas for spaces), then shapes
  local label=$1 setting=${2//,/ }; shift 2
  # shellcheck disable=SC2086  # the setting is words
  env $setting DG_PRINT_CONFIGS=1 timeout -k 5 120 python benchmarks/experiments/dense_rows.py "$@" 2>&1 |
    grep -E " us |rror|jax_deepgemm: dense" | sed "s/^/$label /"
}
wide="4096,2112,2048 2048,2112,2048 3072,4096,2048 1024,2112,7168 1536,7168,7168 768,12288,7168 384,24576,7168
      512,9216,16384 256,24576,2048"
small="128,4096,7168 128,2112,7168 128,7168,16384 128,7168,2048 128,24576,1536"
for round in 1 2; do
  # shellcheck disable=SC2086  # the shapes are words
  {
    rows "model r$round" "" $wide
    rows "c2 r$round" DG_TUNE_CLUSTER=2 $wide
    rows "model r$round" "" $small
    rows "64x64-c2-B r$round" DG_TUNE_BLOCK_M=64,DG_TUNE_BLOCK_N=64,DG_TUNE_CLUSTER=2,DG_TUNE_MULTICAST_B=1 $small
    rows "64x32-c2-B r$round" DG_TUNE_BLOCK_M=64,DG_TUNE_BLOCK_N=32,DG_TUNE_CLUSTER=2,DG_TUNE_MULTICAST_B=1 $small
  }
done | tee "$OUT/cluster_b_scope.txt"
