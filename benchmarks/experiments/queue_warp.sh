#!/usr/bin/env bash
# The tile queue taken by a warp of its own: the second warp of the producer warpgroup in the cluster's CTA 0 takes
# each next tile from the counter and publishes it, instead of the producer warp as it starts a tile.
#   bash benchmarks/experiments/queue_warp.sh rows PATCH      timed rows, sides new (HEAD + PATCH) / old (as sent)
#   bash benchmarks/experiments/queue_warp.sh tests PATCH     side new's GPU tests of the dynamic-tile kernels
# PATCH: a variant of the queue warp against the tree's. One device call each (rows ~2-5 min, tests ~3-8 min).
# Why: the producer's tile switch is on the critical path with 3 stages (NOTES 136's early_publish.patch, repeated in
# session 92: one counter round trip after a tile's first copy costs ragged 5%). There contiguous holds two serial
# round trips where ragged holds one: compiled (NVRTC 13, sm_90a), ptxas issues the tile's expert-id loads before the
# counter's ATOMG but consumes them before it too, so the warp waits for the ids first (NOTES 136 read it as
# overlapped). Contiguous lost 1.6% with dynamic tiles where ragged gained 3% (contiguous_straddle.sh, session 92).
# Ran on an H200, 2026-12-02 (NOTES 138, tests/gpu_runs/2026-12-02_session92/03_ and 04_, 05_), with the first form
# (03_'s ab_change.diff; new: one slot; new2: two; level), kernel time: contiguous with dynamic tiles forced -0.3% to
# -1.8%, ragged -0.6% to -0.9%, k-grouped -0.4% to +0.5%; its GPU tests passed (dynamic tiles, par 2,
# test_gpu_configs.py's ragged and k-grouped cases). Not taken: its queue warp compiles non-uniform in ptxas's view
# (ragged 256 x 128 in clusters, WARPSYNC.COLLECTIVE 38 against the static twin's 11: compile_check.py rejects it).
# queue_warp_uniform.patch waited as one warp and elected the publishing lane (14 against 11, R2UR 43 against 41;
# compile_check.py --quick passed). Ran on an H200, 2026-12-02 (NOTES 139, tests/gpu_runs/2026-12-02_session93/):
# rows as the first form (contiguous with dynamic tiles forced -0.3% to -2.1%, ragged -0.8% to -1.3%, k-grouped -0.7%
# to +0.7%), its tests passed: taken (f07fd33, the patch deleted).
. "$(dirname "$0")/ab_headers.sh"
phase=${1:-rows}
[ $# -ge 2 ] || { echo "usage: queue_warp.sh rows|tests PATCH"; exit 2; }
ab_patch_vs_head "$2"
x=benchmarks/experiments
if [ "$phase" = rows ]; then
  for round in 1 2; do for side in new old; do
    for nk in "7168 2048" "4096 7168"; do
      # shellcheck disable=SC2086  # N and K are two words
      ab_run_side "$side dt r$round" $side 100 $x/contiguous_straddle.py $nk 8192,8192,8192,8192 -- \
        DG_TUNE_DYNAMIC_TILES=1
    done
  done; done
  for side in new old; do
    ab_run_side "$side dt" $side 150 $x/grouped_rows.py contiguous -- DG_TUNE_DYNAMIC_TILES=1
    ab_run_side "$side kg" $side 150 $x/grouped_rows.py k_grouped --
  done
else
  ab_side_tests new dynamic 4 150 tests/test_gpu_configs.py
  AB_TESTS_NAME=cfg ab_side_tests new "ragged or k_grouped" 6 170 tests/test_gpu_configs.py
  AB_TESTS_NAME=grouped ab_side_tests new "ragged or k_grouped" 4 170 tests/test_gpu_grouped.py
fi
ab_use new
echo "done in $((SECONDS - start)) s"
