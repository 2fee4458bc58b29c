#!/usr/bin/env bash
# The tile queue's readers release their slot by a predicated arrival, not a lane-0 branch
# (uniform_queue_arrive.patch). Compiled (NVRTC 13, sm_90a; NOTES 137): that branch is what leaves the contiguous
# segment walk's dynamic-tiles kernel unconverged in ptxas's view (256 x 128 in clusters, N = 4096, K = 7168: R2UR 149
# and 27 collective regions against the static twin's 31 and 4; with the patch 31 and 7, and fewer spills, 16/40/24
# bytes against 80/116/92). The ragged and k-grouped dynamic kernels keep their counts (register names change).
# Question: does contiguous with dynamic tiles, its segment walk now uniform, gain as ragged does (1.4-3.8%)?
# Prediction: contiguous K = 7168 rows (segments by default) with dynamic tiles forced 1-3% faster than static; at
# K = 2048 with segments forced as well, level to -3% (ragged's walk on padded groups); ragged and k-grouped level.
# One device call (~4 min): one round of grouped_rows.py's contiguous rows (contiguous and ragged on the table's four
# shapes; then the k-grouped rows alone, new_kg / old_kg), sides old (as sent, defaults), new_seg_dt (the patch,
# DG_TUNE_SEGMENTS=1 DG_TUNE_DYNAMIC_TILES=1), new_dt (the patch, DG_TUNE_DYNAMIC_TILES=1), new (the patch, defaults).
# Correctness is not checked here: before taking it, the GPU tests of ragged, k-grouped and contiguous dynamic tiles.
# Ran on an H200, 2026-12-02 (NOTES 137, tests/gpu_runs/2026-12-02_session91/05_), one round, against old: contiguous
# with dynamic tiles forced +0.9% / +0.4% at K = 7168, +2.5% / +2.4% at K = 2048 (+3.4% / +2.5% with segments
# forced too); defaults: contiguous +0.0% to +0.2% (the same SASS), ragged +0.1% to +0.5%. The prediction was wrong:
# uniform or not, contiguous loses with dynamic tiles. Not taken. (That run's k-grouped sides drew different groups:
# grouped_rows.py draws the contiguous rows first from the same generator. Each side now runs them alone.)
# The patch since 33abf0a (session 94): alone in a cluster every reader lane arrives (no branch left there), so it
# predicates only the cluster-of-2 arrival; compiled (NVRTC 13, sm_90a: ragged and contiguous 256 x 128 x2), not run.
. "$(dirname "$0")/ab_headers.sh"
ab_patch_vs_head benchmarks/experiments/uniform_queue_arrive.patch
x=benchmarks/experiments/grouped_rows.py
ab_run_side old old 120 $x contiguous --
ab_run_side new_seg_dt new 120 $x contiguous -- DG_TUNE_SEGMENTS=1 DG_TUNE_DYNAMIC_TILES=1
ab_run_side new_dt new 120 $x contiguous -- DG_TUNE_DYNAMIC_TILES=1
ab_run_side new new 120 $x contiguous --
ab_run_side new_kg new 120 $x k_grouped --
ab_run_side old_kg old 120 $x k_grouped --
ab_use new
echo "done in $((SECONDS - start)) s"
