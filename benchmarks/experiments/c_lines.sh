#!/usr/bin/env bash
# Ran in session 64: NOTES 107 and tests/gpu_runs/2026-11-30_session64/ say what it measured and what was taken.
# Prepared in session 63, not run (device time spent). c_lines.patch: the k-grouped f32 tiles' line layout (NOTES 106)
# made in place before C is added (to_line_layout), so that C is loaded as whole 128-byte lines too (4 rows x 32
# columns per warp load instead of 8 rows x 16), and every f32 / bf16 register store goes through one store loop
# (store_wave<kLines>, slot_row / slot_col); store_layout_model.py checks its cells. compile_check --quick: all pass,
# the same three spilling kernels as the tree, no new ones.
# Prediction: the C prefetch has C in the L2 by the epilogue, and an L2 read moves sectors: 8 rows x 64 bytes and
# 4 rows x 128 bytes are the same 16 sectors per warp load, so the rows with C within 0.3% of the tree; if half-line
# loads cost as the half-line stores did (NOTES 106: 1%), up to -1% at N != 2048. Controls, which compile the same code
# as the tree: k-grouped at N = 2048 (no line layout), k-grouped without C, dense f32 with C: within 0.3%. Taken if
# not slower (one store loop instead of two); then the k-grouped GPU tests and their memcheck, below.
# From the repository root: bash benchmarks/experiments/c_lines.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_patch_vs_head benchmarks/experiments/c_lines.patch
AB_ROUNDS=2 ab_grouped k_grouped=4,4096,4096,8192 k_grouped=4,4096,7168,8192 k_grouped=4,7168,7168,8192 \
  k_grouped=4,4096,2048,8192 k_grouped_no_c=16,7168,4096,1024 | tee "$OUT/c_lines_rows.txt"
ab_dense 2 c=f32 4096,7168,2048 | tee -a "$OUT/c_lines_rows.txt"
echo "rows done $((SECONDS - start)) s"
ab_kgrouped_tests c_lines 150
JDG_SANITIZE_FILES="tests/test_gpu_grouped.py" JDG_SANITIZE_K="k_grouped" JDG_SANITIZE_LIMIT=150 \
  bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -3
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
