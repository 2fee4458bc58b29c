#!/usr/bin/env bash
# A stream-K variant against stream-K and the kernel without it, same call, two rounds (NOTES 69). The variant is one
# of stream_k.patch's experiment macros set to 1 in a copy of the headers:
#   JDG_SK_ONE_LOOP     whole tiles take the run-time K range too (one K loop, not two); checked against the reference
#   JDG_SK_NO_EXCHANGE  the pieces without their exchange (wrong results, timing only)
# One device call, from the repo root: bash benchmarks/experiments/stream_k_variant.sh JDG_SK_ONE_LOOP
set -uo pipefail
macro=${1:?"which macro: JDG_SK_ONE_LOOP or JDG_SK_NO_EXCHANGE"}
git apply benchmarks/experiments/stream_k.patch || exit 1  # the experiment's kernel and host code
. benchmarks/experiments/ab_headers.sh
ab_setup
rm -rf /tmp/ab_sk_cuda /tmp/ab_var_cuda && cp -r cuda /tmp/ab_sk_cuda && cp -r cuda /tmp/ab_var_cuda
sed -i "s/#define $macro 0/#define $macro 1/" /tmp/ab_var_cuda/jax_deepgemm/fp8_gemm_config.cuh
grep -q "define $macro 1" /tmp/ab_var_cuda/jax_deepgemm/fp8_gemm_config.cuh || { echo "no macro $macro"; exit 1; }
if [ "$macro" = JDG_SK_ONE_LOOP ]; then
  ab_use var
  DG_JIT_CACHE_DIR=/tmp/ab_cache_var DG_TUNE_STREAM_K=1 timeout -k 5 120 python benchmarks/experiments/check_dense.py \
    4096,2112,7168 4096,7168,2048 2176,1056,2944 2>&1 | grep -E "check|rror" | tee "$OUT/check.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || { echo "check_dense failed: no timing"; exit 1; }
fi
shapes="4096,2112,7168 4096,7168,16384 4096,7168,2048 4096,24576,1536 4096,32768,512 2176,1056,2944"
for round in 1 2; do
  for v in sk:0 sk:1 var:1; do  # side:DG_TUNE_STREAM_K
    ab_use "${v%%:*}"
    # shellcheck disable=SC2086  # the shapes are words
    DG_JIT_CACHE_DIR=/tmp/ab_cache_${v%%:*} DG_TUNE_STREAM_K=${v##*:} timeout -k 5 120 \
      python benchmarks/experiments/dense_rows.py $shapes 2>&1 | grep -E " us |rror" | sed "s/^/$v r$round /"
  done
done | tee "$OUT/ab.txt"
ab_use sk
echo "elapsed $((SECONDS - start)) s"
