#!/usr/bin/env bash
# C's lines prefetched into L2 by the consumers as each tile starts (NOTES 39), against the committed headers (C
# loaded in the epilogue only, NOTES 36): k-grouped rows (f32 C) and dense rows with f32 / bf16 C, new / old
# alternating, two rounds. One device call, from the repo root,
# the old headers sent along (device tool: carry .ab_old_cuda):
#   rm -rf .ab_old_cuda && git archive HEAD cuda | tar -x -C /tmp && mv /tmp/cuda .ab_old_cuda
#   git apply benchmarks/experiments/c_line_prefetch.patch && bash benchmarks/experiments/c_line_prefetch.sh
# Measured and not taken (NOTES 39).
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare .ab_old_cuda
{
  ab_grouped k_grouped
  ab_grouped k_grouped
  ab_dense 2 c=f32 4096,7168,16384 4096,4096,7168 2048,2112,7168 128,4096,7168
  ab_dense 2 c=bf16 4096,7168,2048 4096,4096,7168 128,4096,7168
} 2>&1 | tee "$OUT/c_line_prefetch.txt"
ab_use new
echo "elapsed $((SECONDS - start)) s"
