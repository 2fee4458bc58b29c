#!/usr/bin/env bash
# The register epilogue's loads of C and stores of D with the streaming hint (.cs: evicted from L2 first), against
# the committed headers sent along (NOTES 42): k-grouped rows twice per side, dense rows with f32 / bf16 C and without
# C on the register epilogue (DG_TUNE_TMA_STORE=0), new / old alternating. One device call (carry .ab_old_cuda):
#   rm -rf .ab_old_cuda && git archive HEAD cuda | tar -x -C /tmp && mv /tmp/cuda .ab_old_cuda
#   git apply benchmarks/experiments/stream_hint.patch && bash benchmarks/experiments/stream_hint.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare .ab_old_cuda
{
  ab_grouped k_grouped
  ab_grouped k_grouped
  ab_dense 2 c=f32 4096,7168,16384 4096,4096,7168 2048,2112,7168
  ab_dense 2 c=bf16 4096,7168,2048 4096,4096,7168
  (export DG_TUNE_TMA_STORE=0; ab_dense 2 4096,7168,2048 | sed "s/^/register-epilogue /")
} 2>&1 | tee "$OUT/stream_hint.txt"
ab_use new
echo "elapsed $((SECONDS - start)) s"
