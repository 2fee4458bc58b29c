#!/usr/bin/env bash
# C loaded before the epilogue's stores (NOTES 36): the register epilogue with C against the previous one, which
# placed each C load between stores to D (a memory round trip per load, 64 per thread and 256 x 128 tile).
#  1. k-grouped rows (f32 C), new / old headers, and without C (what the loads of C cost at all);
#  2. dense rows with C (f32 out with f32 C, bf16 out with bf16 C), new / old, two rounds;
#  3. the GPU tests that take C (k-grouped, dense with C, the configuration sweep's C cases), new headers.
# One device call, from the repo root:  bash benchmarks/experiments/c_loads.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare
{
  ab_grouped k_grouped
  ab_use new
  DG_JIT_CACHE_DIR=/tmp/ab_cache_new timeout -k 5 120 python benchmarks/experiments/grouped_rows.py k_grouped_no_c \
    2>&1 | grep -E " us |rror" | sed "s/^/new no-C /"
  ab_dense 2 c=f32 4096,7168,16384 4096,4096,7168 2048,2112,7168 128,4096,7168
  ab_dense 2 c=bf16 4096,7168,2048 4096,4096,7168 128,4096,7168
  # the same rows without C, with the model's TMA-store epilogue and with the register one
  DG_JIT_CACHE_DIR=/tmp/ab_cache_new python benchmarks/experiments/dense_rows.py 4096,7168,2048 4096,4096,7168 \
    2>&1 | grep -E " us |rror" | sed "s/^/new no-C /"
  DG_TUNE_TMA_STORE=0 DG_JIT_CACHE_DIR=/tmp/ab_cache_new python benchmarks/experiments/dense_rows.py 4096,7168,2048 \
    4096,4096,7168 2>&1 | grep -E " us |rror" | sed "s/^/new no-C register-epilogue /"
} 2>&1 | tee "$OUT/c_loads.txt"
ab_use new
timeout -k 5 200 python -I -m pytest tests/test_gpu_dense.py tests/test_gpu_grouped.py tests/test_gpu_configs.py -q \
  -p no:cacheprovider -k "test_gpu_dense or k_grouped or with_c" 2>&1 | tail -5 | tee "$OUT/c_tests.txt"
echo "elapsed $((SECONDS - start)) s"
