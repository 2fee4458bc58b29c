#!/usr/bin/env bash
# Clusters that share an operand with one CTA issuing all of its copies (one_issuer.patch: CTA 0 multicasts both
# halves of the shared A or B box, CTA 1 issues none) against each CTA issuing its half, same call (NOTES 70).
# Correctness first (check_dense.py with the new headers on the model's cluster picks and forced clusters over odd
# block counts; the dense GPU tests, the configuration tests' cluster cases), then kernel times, the sides
# alternating, two rounds. Measured (NOTES 70): 0 to +0.9% slower; not taken.
# One device call, from the repo root: bash benchmarks/experiments/one_issuer.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side new benchmarks/experiments/one_issuer.patch || exit 1
ab_use new
{
  DG_JIT_CACHE_DIR=/tmp/ab_cache_new timeout -k 5 150 python benchmarks/experiments/check_dense.py \
    4096,7168,16384 4096,2112,7168 2048,7168,16384
  DG_TUNE_CLUSTER=2 DG_JIT_CACHE_DIR=/tmp/ab_cache_new_c2 timeout -k 5 100 \
    python benchmarks/experiments/check_dense.py 300,400,128 1000,2112,2048 2176,2112,1536
  DG_TUNE_CLUSTER=2 DG_TUNE_MULTICAST_B=1 DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 \
    DG_JIT_CACHE_DIR=/tmp/ab_cache_new_b timeout -k 5 100 \
    python benchmarks/experiments/check_dense.py 300,400,128 1000,2112,2048 2176,2112,1536
} 2>&1 | grep -E "check|rror" | tee "$OUT/check.txt"
if grep -qvE "^check .*diff [0-9.]+e-0[4-9]" "$OUT/check.txt" || [ "$(grep -c check "$OUT/check.txt")" != 9 ]; then
  echo "check_dense failed: no timing"; exit 1
fi
JDG_TEST_LIMIT=150 ab_tests dense tests/test_gpu_dense.py
JDG_TEST_LIMIT=120 ab_tests configs tests/test_gpu_configs.py -k "x2 or multicast_b"
ab_dense 2 4096,7168,16384 4096,4096,16384 4096,2112,7168 8192,2112,7168 2048,7168,16384 | tee "$OUT/ab_dense.txt"
AB_ROUNDS=2 ab_grouped contiguous | tee "$OUT/ab_grouped.txt"
ab_use new
echo "elapsed $((SECONDS - start)) s"
