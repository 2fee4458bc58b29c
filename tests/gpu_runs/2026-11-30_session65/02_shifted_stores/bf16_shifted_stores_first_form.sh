#!/usr/bin/env bash
# The first form of experiments/bf16_shifted_stores.sh, as this call ran it (16-byte shifted stores at every
# N % 8 != 0; side new = the uncommitted tree of ab_change.diff).
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare_from .ab_old/cuda
export DG_JIT_CACHE_DIR=/tmp/ab_cache_new
JDG_TEST_LIMIT=200 ab_tests widths tests/test_gpu_configs.py -k "store_widths or shifted" &
JDG_TEST_LIMIT=200 ab_tests dense tests/test_gpu_dense.py -k "1540 or odd or options or sweep" &
wait
unset DG_JIT_CACHE_DIR
ab_dense 2 4096,7169,2048 4096,7170,2048 4096,7172,2048 4096,2113,7168 4096,50257,4096 128,50257,4096 |
  tee "$OUT/rows.txt"
ab_dense 2 c=bf16 4096,7169,2048 | tee -a "$OUT/rows.txt"
DG_TUNE_TMA_STORE=0 ab_dense 2 4096,7168,2048 4096,7168,16384 | tee -a "$OUT/rows.txt"
ab_use new
JDG_SANITIZE_FILES="tests/test_gpu_configs.py" JDG_SANITIZE_K="store_widths or shifted" \
  JDG_SANITIZE_LIMIT=150 bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -4
date -u >>"$OUT/machine.txt"
