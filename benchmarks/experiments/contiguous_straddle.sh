#!/usr/bin/env bash
# Where contiguous GEMMs lose against ragged ones on the same tokens (NOTES 137: ragged with dynamic tiles 3.8% ahead
# at 4x8192x7168x2048 on the table's draws, with equal tile counts by arithmetic): the fixed grid's straddling tiles,
# the padding, or the dynamic tiles contiguous cannot use? contiguous_straddle.py on chosen groups: 4 x 8192 (no
# padding, no straddle: the two kernels walk the same tiles), 8064 / 8320 alternating (two straddles, no padding) and
# 4 x 8000 (padded to 8064: two straddles, 64 padding rows each), at N x K = 7168 x 2048 (fixed grid) and 4096 x 7168
# (segment walk); DG_TUNE_DYNAMIC_TILES=0 (both static) and =1 (both dynamic), two rounds.
# Prediction: on 4 x 8192 contiguous and ragged level within 1% when both are static or both dynamic, ragged dynamic
# 2-3% ahead of contiguous static (134's aligned-group gain); each straddle adds ~0.5-1% to contiguous at K = 2048.
# Ran on an H200, 2026-12-02 (NOTES 138, tests/gpu_runs/2026-12-02_session92/01_), two rounds, ragged / contiguous
# time on 4 x 8192: both static 0.990 / 0.991 (K = 2048), 0.983 / 0.988 (K = 7168); both dynamic 0.945 / 0.946,
# 0.965 / 0.966. The straddling draws' ratios lie within 1.3% of those (contiguous 8064 / 8320 at K = 2048: 751.9
# against 748.3 us static). So straddles cost little, the kernels are within 1.7% when static, and dynamic tiles take
# 3.0% / 1.1% off ragged's time and add 1.6% / 1.0% to contiguous's (K = 2048 / 7168).
# One device call, from the repo root (~1.5 min):
#   bash benchmarks/experiments/contiguous_straddle.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
specs=(8192,8192,8192,8192 8064,8320,8064,8320 8000,8000,8000,8000)
for round in 1 2; do
  for dt in 0 1; do
    for nk in "7168 2048" "4096 7168"; do
      # shellcheck disable=SC2086  # N and K are two words
      DG_TUNE_DYNAMIC_TILES=$dt DG_JIT_CACHE_DIR=/tmp/jdg-cache-straddle timeout -k 5 150 \
        python benchmarks/experiments/contiguous_straddle.py $nk "${specs[@]}" 2>&1 |
        grep -E "straddles|rror" | sed "s/^/dt$dt r$round /" | tee -a "$OUT/straddle.txt"
    done
  done
done
echo "elapsed $((SECONDS - start)) s"
