#!/usr/bin/env bash
# 256 x 96 tiles (two 64-row waves per consumer warpgroup, 96-wide wgmmas) on N = 2112 against the model's 128 x 192
# in clusters sharing B (NOTES 70). Both make 352 tiles of M = 4096 (2.67 rounds); per FLOP the 256-row loop moves
# about as many shared-memory bytes (its B read by four waves, A once per wave) but hides its promotion behind the
# other warpgroup's wave, where the 128 x 192 loop reads A twice (half-width groups). No kernel change: the tiles are
# forced with DG_TUNE_*. Correctness first (check_dense.py, poisoned outputs), then kernel times, the sides
# alternating, two rounds. Measured (NOTES 70): +20% to +37% slower; not taken.
# One device call, from the repo root: bash benchmarks/experiments/tall_96.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
force_c2="DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=96 DG_TUNE_CLUSTER=2"
force_b="DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=96 DG_TUNE_CLUSTER=2 DG_TUNE_MULTICAST_B=1"
force_c1="DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=96 DG_TUNE_CLUSTER=1"
for side in c2 b c1; do
  eval "force=\$force_$side"
  # shellcheck disable=SC2086  # the settings are words
  env $force DG_PRINT_CONFIGS=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache-96-$side timeout -k 5 150 \
    python benchmarks/experiments/check_dense.py 4096,2112,7168 1000,2112,2048 300,400,128 2176,2112,1536 2>&1 |
    grep -E "check|rror|jax_deepgemm: dense" | sed "s/^/$side /"
done | tee "$OUT/check.txt"
grep -q "diff" "$OUT/check.txt" || { echo "check_dense printed nothing: no timing"; exit 1; }
shapes=${SHAPES:-"4096,2112,7168 8192,2112,7168 6144,2112,7168 2048,2112,7168 4096,2112,2048"}
for round in 1 2; do
  for side in model c2 b c1; do
    force=""; [ $side != model ] && eval "force=\$force_$side"
    # shellcheck disable=SC2086  # the shapes and settings are words
    env $force DG_JIT_CACHE_DIR=/tmp/jdg-cache-96-$side timeout -k 5 120 \
      python benchmarks/experiments/dense_rows.py $shapes 2>&1 | grep -E " us |rror" | sed "s/^/$side r$round /"
  done
done | tee "$OUT/ab.txt"
echo "elapsed $((SECONDS - start)) s"
