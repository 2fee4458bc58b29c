#!/usr/bin/env bash
# Dynamic tiles: the leader publishes the cluster's next tile after its first copies of the tile, not before
# (early_publish.patch). Session 90's contiguous_dynamic_waits.sh: ragged with dynamic tiles runs 2.2-4.3% ahead of
# contiguous on the table's rows, and contiguous with them forced runs +0.3..+2.3% behind its static order
# (4x8192x7168x2048 885.5 / 865.7 us), yet -3.3% on 16 x 512 rows (128-row tiles). Reading the producer: with dynamic
# tiles its step to the next tile holds the counter's atomicAdd round trip (publish) and then, contiguous only, the
# tile's expert ids (load_tile_experts), back to back, before its first copy of the tile; the static order has only
# the ids. The ring (3 stages of ~0.95 us on 256 x 128 tiles) hides about one stage's worth less a copy's latency.
# With the publish after the first copies, the round trip overlaps the wait for the next free stage.
# Prediction: contiguous forced with dynamic tiles from +0.3..+2.3% to level or a little ahead of static; ragged and
# k-grouped 0-1% faster than now.
# Usage: publish_order.sh PATCH (early_publish.patch, split_fetch_late.patch).
# One device call: two rounds of the table's contiguous and ragged rows, 16 x 512 and the k-grouped rows, sides:
# new (the patch) with DG_TUNE_DYNAMIC_TILES=1, old (as sent) with it, old without it (contiguous static).
# Ran on an H200, 2026-12-02 (NOTES 136, tests/gpu_runs/2026-12-02_session90/02_, 03_), against the sent tree with
# dynamic tiles forced: early_publish.patch ragged K = 2048 rows +5.3% / +5.4%, K = 7168 +0.7% / +0.8%, contiguous
# K = 2048 +2.0% / +2.2%, 16 x 512 +1.8% (contiguous) / +3.0% (ragged), k-grouped -0.2..+0.8%;
# split_fetch_late.patch (the fetch at the tile's start, as now, only its store after the first copies; SASS: the
# ATOMG before the copies) the same or worse: ragged +5.6% / +5.9%, contiguous K = 2048 +5.4% / +5.6%. The
# prediction was wrong: the slot's store after the first copies costs whether the round trip starts before them or
# not; why is not known. (Compiled, the committed producer already issues the tile's id loads before the ATOMG, so
# they overlap.) Neither taken.
. "$(dirname "$0")/ab_headers.sh"
ab_patch_vs_head "$1"
for round in 1 2; do
  for side in new_dt old_dt old_default; do
    ab_use "${side%%_*}"
    env_dt=(DG_TUNE_DYNAMIC_TILES=1); [ "$side" = old_default ] && env_dt=()
    env "${env_dt[@]}" DG_JIT_CACHE_DIR="/tmp/ab_cache_${side%%_*}" timeout -k 5 150 \
      python benchmarks/experiments/grouped_rows.py contiguous contiguous=16,512,3072,4096 k_grouped 2>&1 |
      grep -E " us |rror" | sed "s/^/$side r$round /" | tee -a "$OUT/rows.txt"
  done
done
ab_use new
echo "done in $((SECONDS - start)) s"
