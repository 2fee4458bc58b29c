#!/usr/bin/env bash
# Ran in session 62 (NOTES 105): nothing at short K, +4.3% on one k-grouped row with C: not taken. The
# patch no longer applies (the bf16 stores changed the same loop); kgrouped_f32_lines.patch is its k-grouped form.
# Prepared in session 61, not run (device time spent): f32_store_lines.patch, the register epilogue's f32 stores
# covering whole 128-byte lines: one exchange with the lane four over (the neighbouring quad, whose rows are the next
# ones) after the store layout, so that each warp's 16-byte store writes 4 rows x 32 columns instead of 8 rows x 16
# columns; as many stores, 32 more exchanges per thread and 64-row wave (SASS of the k-grouped 256 x 128 kernel per
# thread and tile: 32 STG.E.128 either way, 128 SHFL.BFLY for 64; no new spills, compile_check --quick). The f32
# register stores hold the k-grouped tiles ~4k cycles per 256 x 128 tile (NOTES 84, 103): the MoE weight gradients
# of float32 weights at ~1024 tokens per expert spend ~20% of their time there. Prediction: if a store's cost is its
# lines, those rows -5% to -10% and the 4-group rows with C -1% to -3%; if its bytes, nothing (then not taken).
# Against the headers as sent, same call: the GPU tests of those paths with the patch, then rows, two rounds.
# From the repository root:  bash benchmarks/experiments/f32_store_lines.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_patch_vs_head benchmarks/experiments/f32_store_lines.patch
ab_tests dense tests/test_gpu_dense.py
ab_tests grouped tests/test_gpu_grouped.py
ab_tests configs tests/test_gpu_configs.py -k "k_grouped or tma0 or f32"
AB_ROUNDS=2 ab_grouped k_grouped_no_c=16,7168,4096,1024 k_grouped_no_c=16,2048,7168,1024 \
  k_grouped=4,4096,7168,8192 k_grouped=4,7168,2048,8192 | tee "$OUT/grouped_rows.txt"
ab_dense 2 c=f32 4096,7168,2048 4096,4096,7168 | tee "$OUT/dense_rows.txt"
date -u >>"$OUT/machine.txt"
