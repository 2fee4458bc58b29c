#!/usr/bin/env bash
# k-grouped rows with the model's choice against DG_TUNE_CLUSTER=$1 (default 1: no clusters; NOTES 75 measured
# clusters of 2 against none on an H100 when none was the model's choice, and the model takes them since), alternating,
# three rounds. One device call, from the repo root: bash benchmarks/experiments/kgrouped_clusters.sh [1|2]
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/kc_cache
alt=${1:-1}
for round in 1 2 3; do for c in model "$alt"; do
  if [ "$c" = model ]; then unset DG_TUNE_CLUSTER; else export DG_TUNE_CLUSTER=$c; fi
  timeout -k 5 100 python benchmarks/experiments/grouped_rows.py k_grouped 2>&1 | grep -E " us |rror" |
    sed "s@^@cluster=$c r$round @"
done; done | tee "$OUT/ab_kgrouped.txt"
echo "elapsed $((SECONDS - start)) s"
