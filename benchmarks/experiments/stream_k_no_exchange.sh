#!/usr/bin/env bash
# Stream-K's pieces without their exchange (JDG_SK_NO_EXCHANGE 1: senders send nothing, owners add nothing; wrong
# results, timing only) against stream-K and the kernel without it, same call (NOTES 69): is the slowdown the
# exchange or the pieces? One device call, from the repo root: bash benchmarks/experiments/stream_k_no_exchange.sh
set -uo pipefail
git apply benchmarks/experiments/stream_k.patch || exit 1  # the experiment's kernel and host code
. benchmarks/experiments/ab_headers.sh
ab_setup
rm -rf /tmp/ab_ex_cuda /tmp/ab_noex_cuda && cp -r cuda /tmp/ab_ex_cuda && cp -r cuda /tmp/ab_noex_cuda
sed -i 's/#define JDG_SK_NO_EXCHANGE 0/#define JDG_SK_NO_EXCHANGE 1/' /tmp/ab_noex_cuda/jax_deepgemm/fp8_gemm_config.cuh
grep -c "define JDG_SK_NO_EXCHANGE 1" /tmp/ab_noex_cuda/jax_deepgemm/fp8_gemm_config.cuh
shapes="4096,2112,7168 4096,7168,16384 4096,7168,2048 4096,32768,512 2176,1056,2944"
for round in 1 2; do
  for v in ex:0 ex:1 noex:1; do
    ab_use "${v%%:*}"
    # shellcheck disable=SC2086  # the shapes are words
    DG_JIT_CACHE_DIR=/tmp/ab_cache_${v%%:*} DG_TUNE_STREAM_K=${v##*:} timeout -k 5 120 \
      python benchmarks/experiments/dense_rows.py $shapes 2>&1 | grep -E " us |rror" | sed "s/^/$v r$round /"
  done
done | tee "$OUT/ab.txt"
ab_use ex
echo "elapsed $((SECONDS - start)) s"
