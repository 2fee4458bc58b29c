#!/usr/bin/env bash
# Dynamic tiles by default for ragged and k-grouped GEMMs (heuristics.cc step 18, benchmarks/NOTES.md 134), as
# committed: each call site's own counters (Fp8GemmArgs::tile_queue). One device call: the GPU tests of the grouped
# modes (every ragged and k-grouped case now runs the counter) and the forced-dynamic cases of test_gpu_configs.py, then
# two rounds of the default against DG_TUNE_DYNAMIC_TILES=0 on the table's k-grouped rows, the MoE weight-gradient
# shapes (bf16 out), the table's ragged and contiguous rows, and the MoE training step.
. "$(dirname "$0")/prelude.sh"
build
parallel_tests tests/test_gpu_grouped.py tests/test_gpu_configs.py tests/test_differentiable.py \
  -k "ragged or k_grouped or dynamic or moe or scan" 2>&1 | tee "$OUT/tests.txt"
ab DG_TUNE_DYNAMIC_TILES 0 python benchmarks/experiments/grouped_rows.py k_grouped k_grouped_bf16=16,4096,7168,1024 \
  k_grouped_bf16=16,7168,2048,1024 contiguous 2>&1 | grep -E "^#|TFLOPS" | tee "$OUT/rows.txt"
ab DG_TUNE_DYNAMIC_TILES 0 python benchmarks/experiments/step_kernels.py moe_x_bf16 2>&1 |
  grep -E "^#|us of kernels|jdg_fp8_gemm" | tee "$OUT/steps.txt"
date -u
[ -d "$OUT/logs" ] && tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
