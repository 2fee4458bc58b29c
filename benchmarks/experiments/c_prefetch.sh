#!/usr/bin/env bash
# C prefetched into L2 by the producer ahead of each tile's epilogue (NOTES 37), against the headers of HEAD (C loaded
# in the epilogue only): k-grouped rows (f32 C) and dense rows with f32 / bf16 C, new / old alternating, two rounds;
# then the GPU tests that take C with the new headers. Measured and not taken (NOTES 37): the kernel change is
# c_prefetch.patch. One device call, from the repo root, with the patch applied to the working tree:
#   git apply benchmarks/experiments/c_prefetch.patch && bash benchmarks/experiments/c_prefetch.sh
# (ab_prepare takes the device copy's git HEAD as "old": in session 17 that copy's HEAD lagged at af9f2df, before
# NOTES 36's change, so "old" there was the kernel before both; compare "new" with 01_c_loads' numbers.)
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare
{
  ab_grouped k_grouped
  ab_grouped k_grouped
  ab_dense 2 c=f32 4096,7168,16384 4096,4096,7168 2048,2112,7168 128,4096,7168
  ab_dense 2 c=bf16 4096,7168,2048 4096,4096,7168 128,4096,7168
} 2>&1 | tee "$OUT/c_prefetch.txt"
ab_use new
timeout -k 5 200 python -I -m pytest tests/test_gpu_dense.py tests/test_gpu_grouped.py tests/test_gpu_configs.py -q \
  -p no:cacheprovider -k "test_gpu_dense or k_grouped or with_c" 2>&1 | tail -5 | tee "$OUT/c_tests.txt"
echo "elapsed $((SECONDS - start)) s"
