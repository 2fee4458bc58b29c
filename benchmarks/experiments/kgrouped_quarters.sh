#!/usr/bin/env bash
# k-grouped 256 x 128 tiles in quarters (NOTES 133): each K block's wgmmas as four m64n64 groups per consumer
# warpgroup, each promoted (an FMUL and an FFMA per element, the per-row B scales) while the next one runs
# (kgrouped_quarters.patch: quarters.patch of NOTES 119 with per-row B scales, on by default for them). The GPU
# tests of the k-grouped, per-row dense, half-width and MoE-layer paths with the patch applied, then, two rounds,
# DG_TUNE_SPLIT_HALVES unset (quarters) against 0 (the two-wave loop) on the MoE step's k-grouped shapes (bf16 out),
# the table's k-grouped rows (f32 with C) and the MoE step itself.
. "$(dirname "$0")/prelude.sh"
git apply benchmarks/experiments/kgrouped_quarters.patch || exit 1
build
parallel_tests tests/test_gpu_grouped.py tests/test_gpu_configs.py tests/test_gpu_dense.py tests/test_differentiable.py \
  -k "k_grouped or split_halves or dense_options or ragged_dot or moe" 2>&1 | tee "$OUT/tests.txt"
ab DG_TUNE_SPLIT_HALVES 0 python benchmarks/experiments/grouped_rows.py k_grouped_bf16=16,4096,7168,1024 \
  k_grouped_bf16=16,7168,2048,1024 k_grouped 2>&1 | grep -E "^#|TFLOPS" | tee "$OUT/rows.txt"
ab DG_TUNE_SPLIT_HALVES 0 python benchmarks/experiments/step_kernels.py moe_x_bf16 2>&1 |
  grep -E "^#|us of kernels|jdg_fp8_gemm" | tee "$OUT/steps.txt"
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
