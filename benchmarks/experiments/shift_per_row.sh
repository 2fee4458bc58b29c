#!/usr/bin/env bash
# Session 68: store_pieces_shifted works out a row's shift t once per row half instead of once per 16-byte piece
# (shift_per_row.patch, side new = the tree as sent) against the headers without it (side old: the patch reversed).
# SASS (nvcc 13, 256 x 128): f32 out at N = 7169 4120 -> 4048 instructions, bf16 3248 -> 3224, STG counts unchanged.
# Prediction: f32 out at N % 4 != 0 0-2% faster (the epilogue is ~15% of those kernels' time at K = 2048, and this
# removes ~5% of its instructions), bf16 0-1%, N % 8 == 0 unchanged (the code is not compiled there).
# From the repository root:  bash benchmarks/experiments/shift_per_row.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_reversed benchmarks/experiments/shift_per_row.patch
ab_side_tests new "store_widths or shifted or odd_n" 8 170 tests/test_gpu_configs.py tests/test_gpu_grouped.py
AB_SIDES="new old" ab_dense 3 out=f32 4096,7169,2048 4096,7170,2048 4096,2113,7168 128,50257,4096 4096,7168,2048 |
  tee "$OUT/rows.txt"
AB_SIDES="new old" ab_dense 3 4096,7169,2048 4096,7170,2048 | tee -a "$OUT/rows.txt"
echo "rows done $((SECONDS - start)) s"
date -u >>"$OUT/machine.txt"
