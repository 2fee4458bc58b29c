#!/usr/bin/env bash
# Ran in session 62 (NOTES 105): taken (b359e9b). The tree has it now: this script would compare the tree with
# itself.
# Prepared in session 61, not run (device time spent): bf16_store16.patch, the register epilogue's bf16 stores as
# 16 bytes (8 columns) per lane instead of 8: one more exchange (lane ^ 2) after the bf16 packing, so that a quad's
# four stores cover 64 contiguous bytes of a row instead of 32, half the store instructions (NOTES 104, "Next"). It
# serves every bf16 tile that keeps the register stores: k-grouped over long K, ragged and masked partial tiles, bf16
# C. Against the headers as sent, same call: the GPU tests of those paths with the patch, then rows, two rounds.
# Prediction: k-grouped bf16 over 64 K blocks per tile -0.5% to -1.5% (its epilogue ~3-4% of a tile); dense with
# the register epilogue forced (DG_TUNE_TMA_STORE=0) at K = 2048 -3% to -8%; masked and ragged rows within 1%.
# From the repository root:  bash benchmarks/experiments/bf16_store16.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_patch_vs_head benchmarks/experiments/bf16_store16.patch
ab_tests dense tests/test_gpu_dense.py
ab_tests grouped tests/test_gpu_grouped.py
ab_tests configs tests/test_gpu_configs.py -k "tma0 or tma_store_k_grouped"
AB_ROUNDS=2 ab_grouped k_grouped_bf16=4,4096,7168,8192 k_grouped_bf16=4,7168,2048,8192 masked |
  tee "$OUT/grouped_rows.txt"
DG_TUNE_TMA_STORE=0 ab_dense 2 4096,7168,2048 4096,4096,7168 2048,2112,7168 | tee "$OUT/dense_rows.txt"
date -u >>"$OUT/machine.txt"
