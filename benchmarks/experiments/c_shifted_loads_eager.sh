#!/usr/bin/env bash
# Session 67: C at N % 4 != 0 (f32: element loads, or 8-byte at N % 4 == 2; bf16: element or 4-byte pair loads) loaded
# in the aligned pieces of a lane's four values (16 bytes f32, 8 bf16), two per lane, and the window between them
# (load_c_quad_shifted; c_shifted_loads_eager.patch, side new = the tree as sent) against the headers without it
# (side old: the patch reversed). The window between the pieces made right after their loads.
# Prediction: with the stores shifted (f32_shifted_stores.sh), C's loads are what is left of the odd-N cost: f32 C
# at 4096 x 7169 x 2048 209 us against 142 without C, bf16 C 160 against 120. If the loads cost as the stores did,
# f32 C 7169 209 -> ~175-185, 7170 201 -> ~180, bf16 C 7169 160 -> ~140-145; N % 4 == 0 unchanged.
# Ran in session 67 (NOTES 110) on 4cac816 + this patch: slower (f32 C 7169 209 -> 312 us, bf16 C 157 -> 228);
# c_shifted_loads.sh makes the window only after the batch's loads.
# From the repository root (on 4cac816 + the patch):  bash benchmarks/experiments/c_shifted_loads_eager.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_reversed benchmarks/experiments/c_shifted_loads_eager.patch
ab_side_tests new "store_widths or shifted or odd_n or (test_dense and 130) or test_dense_options" 10 170 \
  tests/test_gpu_configs.py tests/test_gpu_grouped.py tests/test_gpu_dense.py
AB_SIDES="new old" ab_dense 3 c=f32 4096,7169,2048 4096,7170,2048 4096,7168,2048 | tee "$OUT/rows.txt"
AB_SIDES="new old" ab_dense 3 c=bf16 4096,7169,2048 4096,7170,2048 4096,7172,2048 4096,7168,2048 4096,50257,4096 |
  tee -a "$OUT/rows.txt"
echo "rows done $((SECONDS - start)) s"
ab_use new
JDG_SANITIZE_FILES="tests/test_gpu_configs.py tests/test_gpu_grouped.py tests/test_gpu_dense.py" \
  JDG_SANITIZE_K="shifted or store_widths or odd_n or test_dense_options" \
  JDG_SANITIZE_LIMIT=$((570 - (SECONDS - start))) bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -4
date -u >>"$OUT/machine.txt"
