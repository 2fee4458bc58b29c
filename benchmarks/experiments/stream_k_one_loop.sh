#!/usr/bin/env bash
# Stream-K kernels with one K loop (JDG_SK_ONE_LOOP 1: whole tiles take the run-time K range too) against two (whole
# tiles with a compile-time range, as the tail split has), and the kernel without stream-K, same call (NOTES 69).
# One device call, from the repo root: bash benchmarks/experiments/stream_k_one_loop.sh
set -uo pipefail
git apply benchmarks/experiments/stream_k.patch || exit 1  # the experiment's kernel and host code
. benchmarks/experiments/ab_headers.sh
ab_setup
rm -rf /tmp/ab_two_cuda /tmp/ab_one_cuda && cp -r cuda /tmp/ab_two_cuda && cp -r cuda /tmp/ab_one_cuda
sed -i 's/#define JDG_SK_ONE_LOOP 0/#define JDG_SK_ONE_LOOP 1/' /tmp/ab_one_cuda/jax_deepgemm/fp8_gemm_config.cuh
grep -c "define JDG_SK_ONE_LOOP 1" /tmp/ab_one_cuda/jax_deepgemm/fp8_gemm_config.cuh
ab_use one
DG_JIT_CACHE_DIR=/tmp/ab_cache_one DG_TUNE_STREAM_K=1 timeout -k 5 120 python benchmarks/experiments/check_dense.py \
  4096,2112,7168 4096,7168,2048 2176,1056,2944 2>&1 | grep -E "check|rror" | tee "$OUT/check.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "check_dense failed: no timing"; exit 1; }
shapes="4096,2112,7168 4096,7168,16384 4096,7168,2048 4096,24576,1536 4096,32768,512"
for round in 1 2; do
  for v in two:0 two:1 one:1; do
    ab_use "${v%%:*}"
    # shellcheck disable=SC2086  # the shapes are words
    DG_JIT_CACHE_DIR=/tmp/ab_cache_${v%%:*} DG_TUNE_STREAM_K=${v##*:} timeout -k 5 120 \
      python benchmarks/experiments/dense_rows.py $shapes 2>&1 | grep -E " us |rror" | sed "s/^/$v r$round /"
  done
done | tee "$OUT/ab.txt"
ab_use two
echo "elapsed $((SECONDS - start)) s"
