#!/usr/bin/env bash
# 176-wide tiles in half-width groups (88-wide wgmmas, each chunk's scale block at compile time for all 8 offsets)
# against the model's picks, same call (NOTES 68). Correctness first: check_dense.py (poisoned outputs) with
# 128 x 176 forced, and test_gpu_configs.py's split-halves and B-multicast cases (176 and 144 among them); then
# kernel times, the default and 128 x 176 forced alternating, two rounds. The kernel change is width_176.patch (wgmma
# widths 72 / 88 / 104 / 120, half-width groups for every width over 128, 8 compiled scale offsets), applied here.
# One device call, from the repo root: bash benchmarks/experiments/width_176.sh
# Measured (NOTES 68): 176 as slow as 192 on N = 2112 (+1.3%), slower elsewhere; not taken.
set -uo pipefail
git apply benchmarks/experiments/width_176.patch || exit 1
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-176
DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=176 DG_PRINT_CONFIGS=1 timeout -k 5 150 \
  python benchmarks/experiments/check_dense.py 4096,2112,7168 1000,2112,2048 300,400,128 2176,2112,1536 \
  4096,24576,1536 2>&1 | grep -E "check|rror|jax_deepgemm: dense" | tee "$OUT/check.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "check_dense failed: no timing"; exit 1; }
JDG_TEST_LIMIT=200 ab_tests configs tests/test_gpu_configs.py -k "split_halves or multicast_b"
shapes=${SHAPES:-"4096,2112,7168 8192,2112,7168 6144,2112,7168 2048,2112,7168 4096,2112,2048 4096,24576,1536
  4096,4096,7168 4096,7168,2048 4096,7168,16384"}
for round in 1 2; do
  for side in model 176; do
    if [ $side = 176 ]; then force="DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=176"; else force=""; fi
    # shellcheck disable=SC2086  # the shapes and settings are words
    env $force timeout -k 5 150 python benchmarks/experiments/dense_rows.py $shapes 2>&1 |
      grep -E " us |rror" | sed "s/^/$side r$round /"
  done
done | tee "$OUT/ab.txt"
echo "elapsed $((SECONDS - start)) s"
