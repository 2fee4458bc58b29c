#!/usr/bin/env bash
# Why contiguous GEMMs do not gain from dynamic tiles when ragged ones on the same aligned groups do (NOTES 134, 135).
# Same tiles (256 x 128, clusters of 2), same rows; statically within 1.3% (4x8192x7168x2048: 873.0 / 872.9 us).
# Dynamic tiles took ragged to 839.8 us (-3.8%) but contiguous, forced, to +0.1..+2.0% (NOTES 134, session 88's
# 03_). The contiguous kernel at K = 2048 is as warp-uniform with them as without (27 R2UR both), so divergence does
# not explain it there. One device call:
#  1. DG_PROFILE_WAITS of ragged (static / dynamic) and contiguous (static / dynamic forced) on two table shapes and a
#     padded MoE-like draw. Per kernel: cycles per K block, wait shares, and the last launch's spread of CTA cycles
#     (tools/waits_summary.py). Where the gain comes from shows up there: a narrower spread (the tail), or fewer
#     cycles per K block (the order's L2 reuse). Where the contiguous kernel loses shows up the same way.
#  2. Two rounds without / with DG_TUNE_DYNAMIC_TILES=1 of the table's contiguous (and ragged) rows and 16 x 512 rows.
# Prediction: ragged's gain is in the spread (its static tail is longer), and contiguous with dynamic tiles keeps its
# spread but spends more cycles per K block.
# Ran on an H200, 2026-12-02 (NOTES 136, tests/gpu_runs/2026-12-02_session90/01_): the profile does not separate
# them. Profiled (aligned 8192-row groups, DG_PROFILE_WAITS), contiguous with dynamic tiles had the narrower spread
# (1.7% against 7.3%) and as many cycles per K block, and ragged with them more cycles per K block (1723 / 1557):
# neither as timed. Timed (the table's draws: groups padded to 128, so 256-row tiles straddle experts at K = 2048),
# contiguous +0.3% to +2.3%, 16 x 512 (128-row tiles) -3.3%.
. "$(dirname "$0")/prelude.sh"
build
run() {
  echo "## $* $(env | grep -E '^DG_TUNE' | sort | tr '\n' ' ')"
  timeout -k 5 90 python tools/profile_one.py "$@" 2>&1 | grep -vE "^[IWE][0-9]{4}"
}
(  # a subshell: the profile's settings end with it
  export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=10
  for shape in 4,8192,7168,2048 4,8192,4096,7168; do
    DG_TUNE_DYNAMIC_TILES=0 run ragged "$shape"
    run ragged "$shape"
    run contiguous "$shape"
    DG_TUNE_DYNAMIC_TILES=1 run contiguous "$shape"
  done
  DG_TUNE_DYNAMIC_TILES=0 run ragged 16,500,3072,4096
  run ragged 16,500,3072,4096
  run contiguous_padded 16,500,3072,4096
  DG_TUNE_DYNAMIC_TILES=1 run contiguous_padded 16,500,3072,4096
) >"$OUT/waits.log"
python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
grep "jax_deepgemm: " "$OUT/waits.log" | sort -u >"$OUT/waits_configs.txt"
ab DG_TUNE_DYNAMIC_TILES 1 python benchmarks/experiments/grouped_rows.py contiguous contiguous=16,512,3072,4096 2>&1 |
  grep -E "^#|TFLOPS" | tee "$OUT/rows.txt"
date -u
