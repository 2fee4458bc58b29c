#!/usr/bin/env bash
# k-grouped rows in clusters of 2 (DG_TUNE_CLUSTER=2, N blocks paired) against the model's choice (none), alternating,
# three rounds. One device call, from the repo root: bash benchmarks/experiments/kgrouped_clusters.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/kc_cache
for round in 1 2 3; do for c in model 2; do
  if [ $c = model ]; then unset DG_TUNE_CLUSTER; else export DG_TUNE_CLUSTER=$c; fi
  timeout -k 5 100 python benchmarks/experiments/grouped_rows.py k_grouped 2>&1 | grep -E " us |rror" |
    sed "s@^@cluster=$c r$round @"
done; done | tee "$OUT/ab_kgrouped.txt"
echo "elapsed $((SECONDS - start)) s"
