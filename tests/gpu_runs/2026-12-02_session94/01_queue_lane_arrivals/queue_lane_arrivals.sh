#!/usr/bin/env bash
# Dynamic tiles alone in a cluster (x1): the queue warp hands the tile index on by a plain shared store and a releasing
# arrival (f07fd33), since st.async in a cluster of one CTA stops the kernel under compute-sanitizer memcheck
# ("Invalid __shared__ write ... Cluster needs to have at least 2 blocks"; also at a9030ec, before the queue warp).
# memcheck then ran the 12 dynamic-tile config cases clean, but racecheck reported the readers' loads against that
# store on the x1 cases: each reader warp arrives on `empty` from lane 0 after __syncwarp, and racecheck does not
# order lanes 1-31's reads before the next store that way (NOTES 139; H200, 2026-12-02, session 93).
# queue_lane_arrivals.patch: in x1 kernels every reader lane arrives (empty counts 32 per reader warp). Compiled only.
# Predicted: memcheck and racecheck clean on the dynamic x1 cases (as the st.async form was under racecheck), kernel
# time level (31 more arrivals per reader warp per tile).
#   bash benchmarks/experiments/queue_lane_arrivals.sh        one device call, ~4 min: sanitizers of side lanes and
#                                                               side old (racecheck, for the report), then rows
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side lanes benchmarks/experiments/queue_lane_arrivals.patch || exit 1
export JDG_SANITIZE_FILES=tests/test_gpu_configs.py JDG_SANITIZE_K="dynamic and x1"
for side in lanes old; do
  ab_use $side; tools=racecheck; [ $side = lanes ] && tools="memcheck racecheck"
  echo "side $side:"
  # shellcheck disable=SC2086  # the tools are words
  JDG_SANITIZE_LIMIT=70 bash tools/gpu_session.sh sanitize $tools 2>&1 | grep -E "^(memcheck|racecheck)[: ]" | tail -8
  for t in $tools; do mv "$OUT/$t.log" "$OUT/${t}_$side.log"; done
  rm -f "$OUT"/*.ids "$OUT"/*.probe_*.log
done
# Timed in clusters of 1: the ragged and k-grouped rows (dynamic tiles; contiguous rows, static, come along).
for side in lanes old; do
  ab_run_side "$side x1" $side 150 benchmarks/experiments/grouped_rows.py contiguous k_grouped -- DG_TUNE_CLUSTER=1
done
ab_use old; date -u >>"$OUT/machine.txt"
# The device tool returns 8 files at most: the logs in one archive, beside machine.txt and rows.txt.
(cd "$OUT" && tar czf logs.tgz ./*.log ./*.diff && rm -f ./*.log ./*.diff ./*.ids)
echo "done in $((SECONDS - start)) s"
