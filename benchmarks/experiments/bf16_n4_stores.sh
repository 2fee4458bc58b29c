#!/usr/bin/env bash
# Ran in session 64: NOTES 107 and tests/gpu_runs/2026-11-30_session64/ say what it measured and what was taken.
# Prepared in session 63, not run (device time spent). bf16_n4_stores.patch: where N % 8 == 4, the register epilogue's
# bf16 stores of whole chunk quads (store_wave_bf16x8) write each lane's 8 columns as two 8-byte stores (one at a
# row's last 4 columns) instead of 8 element stores: rows of such N are 8-byte aligned but not 16. Before NOTES 105's
# 16-byte stores these rows took 8-byte stores; since, element stores (correct: the odd-N tests; no GPU test had
# N % 8 == 4 until test_gpu_dense.py's sweep shape 1000 x 1540 x 2048). The TMA store needs N % 8 == 0, so every bf16
# tile of such N takes these stores. compile_check --quick (its 1540-wide kernel): passes, no spills.
# Prediction: four times fewer store instructions on those tiles (NOTES 105: half of them took dense register stores
# 3.2% faster at K = 2048): 4096 x 7172 x 2048 5-15% faster, 4096 x 2116 x 7168 2-6%; the control (N % 8 == 0,
# register stores forced) within 0.3%. The dense GPU tests first, with the patch, then rows, two rounds.
# From the repository root:  bash benchmarks/experiments/bf16_n4_stores.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_patch_vs_head benchmarks/experiments/bf16_n4_stores.patch
JDG_TEST_LIMIT=200 ab_tests dense tests/test_gpu_dense.py -k "1540 or odd or options or sweep"
ab_dense 2 4096,7172,2048 4096,2116,7168 | tee "$OUT/dense_rows.txt"
DG_TUNE_TMA_STORE=0 ab_dense 2 4096,7168,2048 | tee -a "$OUT/dense_rows.txt"
date -u >>"$OUT/machine.txt"
