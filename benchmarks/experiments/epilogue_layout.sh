#!/usr/bin/env bash
# Same-run A/B of epilogue changes against the committed headers sent along (NOTES 40-41: the store-layout register
# epilogue and the per-warpgroup TMA store for partial tiles, both in the kernel since 235334a). Rows: k-grouped (f32
# out with C), dense with f32 / bf16 C, dense without C on the register epilogue (DG_TUNE_TMA_STORE=0), masked and
# contiguous / ragged; new / old alternating. Then the GPU tests that take the register epilogue with the new
# headers. One device call (carry .ab_old_cuda), from the repo root, with the change in the working tree:
#   rm -rf .ab_old_cuda && git archive HEAD cuda | tar -x -C /tmp && mv /tmp/cuda .ab_old_cuda
#   bash benchmarks/experiments/epilogue_layout.sh        # EPI_TESTS=0: the A/B only (the tests take ~280 s more)
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare .ab_old_cuda
{
  ab_grouped k_grouped masked
  ab_grouped k_grouped masked
  ab_dense 2 c=f32 4096,7168,16384 4096,4096,7168 2048,2112,7168 128,4096,7168
  ab_dense 2 c=bf16 4096,7168,2048 4096,4096,7168 128,4096,7168
  (export DG_TUNE_TMA_STORE=0; ab_dense 2 4096,7168,2048 4096,4096,7168 128,4096,7168 | sed "s/^/register-epilogue /")
  ab_grouped contiguous
} 2>&1 | tee "$OUT/epilogue_layout.txt"
ab_use new
[ "${EPI_TESTS:-1}" = 0 ] && { echo "elapsed $((SECONDS - start)) s"; exit 0; }
ab_tests files tests/test_gpu_dense.py tests/test_gpu_grouped.py &
ab_tests configs tests/test_gpu_configs.py -k "with_c or k_grouped or masked or ragged" &
wait
echo "elapsed $((SECONDS - start)) s"
