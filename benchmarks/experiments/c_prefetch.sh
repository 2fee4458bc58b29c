#!/usr/bin/env bash
# C prefetched into L2 ahead of each tile's epilogue, against the committed kernel (C loaded in the epilogue only,
# NOTES 36): k-grouped rows (f32 C) and dense rows with f32 / bf16 C, new / old alternating, two rounds. Measured and
# not taken: c_prefetch.patch (bulk prefetches by the producer, NOTES 37; this script then also ran the GPU tests that
# take C), c_line_prefetch.patch (the consumers' line prefetches as a tile starts) and c_line_prefetch_late.patch (the
# same 6 K blocks before its last; NOTES 39). One device call per patch, from the repo root, the committed headers
# sent along (device tool: carry .ab_old_cuda):
#   rm -rf .ab_old_cuda && git archive HEAD cuda | tar -x -C /tmp && mv /tmp/cuda .ab_old_cuda
#   git apply benchmarks/experiments/c_line_prefetch.patch && bash benchmarks/experiments/c_prefetch.sh .ab_old_cuda
# The patches apply to 6ccf702's kernel (run from a `git worktree add` of it); the epilogue has changed since
# (NOTES 41). Without a folder ab_prepare takes the device copy's git HEAD as "old": in session 17's c_prefetch.patch
# run that copy's HEAD lagged at af9f2df, before NOTES 36, so "old" there was the kernel before both.
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare "${1:-}"
{
  ab_grouped k_grouped
  ab_grouped k_grouped
  ab_dense 2 c=f32 4096,7168,16384 4096,4096,7168 2048,2112,7168 128,4096,7168
  ab_dense 2 c=bf16 4096,7168,2048 4096,4096,7168 128,4096,7168
} 2>&1 | tee "$OUT/c_prefetch.txt"
ab_use new
echo "elapsed $((SECONDS - start)) s"
