#!/usr/bin/env bash
# Masked GEMMs in clusters of 2 sharing A again (NOTES 17 measured them within 2% but one +10% faster, before the
# tail split, the accumulator pipeline's later changes and NOTES 49's cheaper cluster start): the masked rows as the
# model takes them (128 x 128, the tail split from K = 4096), with the tail split off (DG_TUNE_TAIL_SPLIT=0), and in
# clusters of 2 (DG_TUNE_CLUSTER=2, which the tail split excludes), alternating, three rounds, the same masked_m draw
# on every side. One device call: bash benchmarks/experiments/masked_clusters.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/masked_clusters
run() {  # label, environment assignments
  local label=$1; shift
  env "$@" timeout -k 5 150 python benchmarks/experiments/grouped_rows.py masked 2>&1 | grep -E " us |rror" |
    sed "s/^/$label /"
}
for round in 1 2 3; do
  run "model    r$round"
  run "no-tail  r$round" DG_TUNE_TAIL_SPLIT=0
  run "cluster2 r$round" DG_TUNE_TAIL_SPLIT=0 DG_TUNE_CLUSTER=2
done 2>&1 | tee "$OUT/masked_clusters.txt"
echo "elapsed $((SECONDS - start)) s"
