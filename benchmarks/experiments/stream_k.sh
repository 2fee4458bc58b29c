#!/usr/bin/env bash
# Stream-K for the last round of dense GEMMs (DG_TUNE_STREAM_K=1, JDG_STREAM_K; NOTES 69): correctness first
# (check_dense.py with poisoned outputs: the table's shapes, M and N tails, K not a multiple of 128, and one tile
# past the whole rounds shared out over 132 clusters, with and without clusters; then test_gpu_dense.py with stream-K
# wherever it applies), then kernel times, the model's configuration without / with stream-K alternating, two rounds.
# One device call, from the repo root: bash benchmarks/experiments/stream_k.sh
set -uo pipefail
git apply benchmarks/experiments/stream_k.patch || exit 1  # the experiment's kernel and host code
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-sk
check() {  # settings, shapes
  local settings=$1; shift
  # shellcheck disable=SC2086  # the settings are words
  env $settings DG_TUNE_STREAM_K=1 DG_PRINT_CONFIGS=1 timeout -k 5 150 \
    python benchmarks/experiments/check_dense.py "$@" 2>&1 | grep -E "check|rror|jax_deepgemm: dense" |
    sed "s/^/[${settings:-model}] /"
  return "${PIPESTATUS[0]}"
}
{
  check "" 4096,2112,7168 4096,7168,16384 4096,7168,2048 4100,2112,7168 3000,4000,1000 4096,24576,1536 &&
  check "DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=1" 1792,2432,1024 1792,2432,7168 &&
  check "DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=2" 1792,2432,1024 3584,2432,1024 &&
  check "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=1" 2176,1056,2944
} | tee "$OUT/check.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "check_dense failed: no timing"; exit 1; }
DG_TUNE_STREAM_K=1 JDG_TEST_LIMIT=200 ab_tests dense_sk tests/test_gpu_dense.py
shapes="4096,2112,7168 8192,2112,7168 2048,2112,7168 4096,7168,16384 4096,7168,2048 4096,4096,7168 4096,24576,1536
  4096,32768,512 4096,7000,7000"
for round in 1 2; do
  for sk in 0 1; do
    # shellcheck disable=SC2086  # the shapes are words
    DG_TUNE_STREAM_K=$sk timeout -k 5 150 python benchmarks/experiments/dense_rows.py $shapes 2>&1 |
      grep -E " us |rror" | sed "s/^/sk$sk r$round /"
  done
done | tee "$OUT/ab.txt"
echo "elapsed $((SECONDS - start)) s"
