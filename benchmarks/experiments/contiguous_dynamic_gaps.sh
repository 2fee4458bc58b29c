#!/usr/bin/env bash
# Where contiguous GEMMs lose with dynamic tiles (NOTES 136): at the tile switch or in the K loop? On the table's
# K = 2048 draws (groups padded to 128, 256-row tiles straddling experts), contiguous forced to dynamic tiles ran +2.3%
# while ragged on the same tokens gained 3.8% (NOTES 135-136), and a later slot store cost ~0.4 us per tile (NOTES 136).
# The K loop's timeline (DG_PROFILE_WAITS, CTAs 0 and 1, tile_gaps.py: the boundary gap and its parts, the K block
# period) of contiguous and ragged, static and dynamic, on 4 groups of 8000 rows (contiguous pads them to 8064, so
# two of the three expert boundaries fall inside a 256-row tile) at N = 7168, K = 2048; then waits_summary.py's line.
# Prediction: the dynamic contiguous kernel's boundary gap (the next pass's setup or its first stage's wait) longer
# than its static twin's by ~0.3-0.5 us (~500-850 cycles), its K block period the same; ragged's gaps level.
# (A straddling tile's two passes share its K blocks' tags: tile_gaps.py keeps the second.)
# Ran on an H200, 2026-12-02 (NOTES 137, tests/gpu_runs/2026-12-02_session91/01_): wrong both ways. Contiguous's gaps
# level (4247-4452 static, 4204-4461 dynamic cycles); ragged's 1400-2200 cycles longer with dynamic tiles and its
# period 6-7% longer, where the timed kernel gains 1.4-3.8%: the profile build ranks them opposite to the timings.
# Static contiguous's gap ~2000 cycles longer than static ragged's (epilogue +1100, setup +900): fetch_next_early.sh.
# One device call, from the repo root (~1 min):
#   bash benchmarks/experiments/contiguous_dynamic_gaps.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-gaps DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=3
for op in contiguous_padded ragged; do
  for dynamic in 0 1; do
    log="$OUT/${op}_dt$dynamic.log"
    echo "## $op 4,8000,7168,2048 DG_TUNE_DYNAMIC_TILES=$dynamic"
    DG_TUNE_DYNAMIC_TILES=$dynamic timeout -k 5 90 python tools/profile_one.py "$op" 4,8000,7168,2048 >"$log" 2>&1
    grep -m1 "jax_deepgemm: " "$log" | cut -c1-240
    python benchmarks/experiments/tile_gaps.py <"$log"
    { echo "## $op dt$dynamic"; cat "$log"; } | python tools/waits_summary.py | tail -1 | cut -c1-400
  done
done 2>&1 | tee "$OUT/gaps.txt"
echo "elapsed $((SECONDS - start)) s"
