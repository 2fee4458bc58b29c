#!/usr/bin/env bash
# Prepared in session 65 (NOTES 108), run in session 66 (NOTES 109: side even taken).
# The odd-N shifted stores of store_wave_bf16x8_shifted as one 16-byte
# PTX store per lane (bf16_shifted_v4.patch; the tree's uint4 store compiles to four 4-byte stores: NVVM split it,
# SASS shows STG.E x4 per lane), and the same at every N % 8 != 0 (side even: + bf16_shifted_v4_even.patch), against
# the tree (side old). SASS of the patch (nvdisasm): 16 STG.E.128 per 256 x 128 tile's wave pair, no spills.
# Prediction: if the 4-byte split is what held session 65's shifted rows at the speed of aligned 4-byte stores (165 us
# at 4096 x 7169 x 2048 against 159 at N % 4 == 2, 127 for 8-byte at N % 4 == 0, 102 for 16-byte at N % 8 == 0):
# side v4 ~110-120 us at 4096 x 7169 x 2048, 4096 x 2113 x 7168 126 -> ~108, 4096 x 50257 x 4096 1568 -> ~1300; side
# even also 4096 x 7172 x 2048 127 -> ~110-120 and 7170 159 -> ~110-120. If v4 stays near 165, the shift's other
# costs (edges, shuffles, partial sectors) set these rows' time instead. Tests first (odd- and even-N store cases with
# each side's headers), then rows, then memcheck of side v4's cases.
# From the repository root:  bash benchmarks/experiments/bf16_shifted_v4.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
git apply benchmarks/experiments/bf16_shifted_v4.patch || exit 1
rm -rf /tmp/ab_v4_cuda && cp -r cuda /tmp/ab_v4_cuda
git apply benchmarks/experiments/bf16_shifted_v4_even.patch || exit 1
rm -rf /tmp/ab_even_cuda && cp -r cuda /tmp/ab_even_cuda
for side in v4 even; do ab_side_tests $side "store_widths or shifted" 6 150 tests/test_gpu_configs.py; done
AB_SIDES="v4 even old" ab_dense 2 4096,7169,2048 4096,2113,7168 4096,50257,4096 128,50257,4096 4096,7172,2048 \
  4096,7170,2048 | tee "$OUT/rows.txt"
AB_SIDES="v4 old" ab_dense 2 c=bf16 4096,7169,2048 | tee -a "$OUT/rows.txt"
ab_use v4
JDG_SANITIZE_FILES="tests/test_gpu_configs.py" JDG_SANITIZE_K="shifted or 1537" \
  JDG_SANITIZE_LIMIT=120 bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -4
date -u >>"$OUT/machine.txt"
