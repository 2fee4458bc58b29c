#!/usr/bin/env bash
# Ran in session 65: NOTES 108 and tests/gpu_runs/2026-11-30_session65/ say what it measured and what was taken.
# (As compiled, both sides' vector stores were split into 4-byte stores, found after the run in the SASS; s8's patch
# applies to 56239ad's tree only. experiments/bf16_shifted_v4.sh is the prepared 16-byte form.)
# bf16 rows of odd N in the register epilogue (store_wave_bf16x8_shifted): each lane's 8 columns stored shifted to
# the row's alignment, the columns past its own taken from the next lane; side new: one 16-byte store per lane, side
# s8 (bf16_shifted_8byte.patch): two 8-byte ones; side old: the headers of the commit in .ab_old/cuda (git archive
# COMMIT cuda | tar -x -C .ab_old), element stores at odd N.
# First run (NOTES 108, 16-byte shifts at every N % 8 != 0): odd N 1.4-1.7x faster, N % 4 == 2 1% slower, N % 4 == 0
# (8-byte stores before) 20% slower; so the shift now serves odd N only. Prediction for s8: 8-byte aligned stores
# ran N % 4 == 0 rows at 127 us where the 16-byte shift ran 153 (4096 x 7172 x 2048), so s8 ~130-140 us at 4096 x
# 7169 x 2048 against new's 166, and ahead of new on 4096 x 2113 x 7168 and 4096 x 50257 x 4096 in proportion; even N
# equal between new and old (the same stores, refactored). Tests first (odd-N cases per side), then rows.
# From the repository root:  bash benchmarks/experiments/bf16_shifted_stores.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare_from .ab_old/cuda
ab_use new; git apply benchmarks/experiments/bf16_shifted_8byte.patch || exit 1  # side s8 = new + the patch
rm -rf /tmp/ab_s8_cuda && cp -r cuda /tmp/ab_s8_cuda && ab_use new
python -I -m pytest tests/test_gpu_configs.py -k "store_widths or shifted" --collect-only -q -p no:cacheprovider \
  2>/dev/null | grep "::" >/tmp/sh_ids.txt
grep -E "1537|shifted" /tmp/sh_ids.txt | grep -v "2116" >/tmp/sh_odd_ids.txt
for side in ${AB_TEST_SIDES:-new s8}; do
  ab_use $side; ids=/tmp/sh_ids.txt; [ $side = new ] || ids=/tmp/sh_odd_ids.txt
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$side ab_split_tests $side $ids 6 150
done
AB_SIDES=${AB_SIDES:-new s8 old} ab_dense 2 4096,7169,2048 4096,2113,7168 4096,50257,4096 128,50257,4096 \
  4096,7172,2048 4096,7170,2048 | tee "$OUT/rows.txt"
ab_use new
date -u >>"$OUT/machine.txt"
