#!/usr/bin/env bash
# Session 67: f32 rows of N % 4 != 0 (odd N: element stores; N % 4 == 2: 8-byte ones) in 16-byte stores shifted to
# each row's alignment, as the bf16 rows of N % 8 != 0 (store_pieces_shifted; f32_shifted_stores.patch, side new =
# the tree as sent) against the headers without it (side old: the patch reversed).
# Prediction: bf16's element -> shifted stores took 4096 x 7169 x 2048 273 -> 119 us (NOTES 108, 109) with half of
# f32's bytes and twice its element stores per 16 bytes; f32 rows at odd N ~25-40% faster, N % 4 == 2 (8-byte
# stores, as bf16's N % 8 == 4: 127 -> 114) ~5-10%, N % 4 == 0 and bf16 unchanged.
# From the repository root:  bash benchmarks/experiments/f32_shifted_stores.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_reversed benchmarks/experiments/f32_shifted_stores.patch
ab_side_tests new "store_widths or shifted or odd_n" 8 170 tests/test_gpu_configs.py tests/test_gpu_grouped.py
AB_SIDES="new old" ab_dense 3 out=f32 4096,7169,2048 4096,7170,2048 4096,2113,7168 4096,50257,4096 128,50257,4096 \
  4096,7168,2048 | tee "$OUT/rows.txt"
AB_SIDES="new old" ab_dense 2 c=f32 4096,7169,2048 4096,7170,2048 | tee -a "$OUT/rows.txt"
AB_SIDES="new old" ab_dense 2 4096,7169,2048 | tee -a "$OUT/rows.txt"
echo "rows done $((SECONDS - start)) s"
ab_use new
JDG_SANITIZE_FILES="tests/test_gpu_configs.py tests/test_gpu_grouped.py" \
  JDG_SANITIZE_K="shifted or store_widths or odd_n" \
  JDG_SANITIZE_LIMIT=$((570 - (SECONDS - start))) bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -4
date -u >>"$OUT/machine.txt"
