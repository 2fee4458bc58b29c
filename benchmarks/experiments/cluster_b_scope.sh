#!/usr/bin/env bash
# Prepared (NOTES 35, Next): with clusters sharing B, do they now pay on 128 x 160 / 192 rows the model leaves
# unclustered (K < 4096, M < 2048, one wave)? Clusters forced (B shared by default there) against the model, same
# build, alternating, two rounds; kernel time only. One device call, from the repo root:
#   bash benchmarks/experiments/cluster_b_scope.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-cbs
shapes="4096,2112,2048 2048,2112,2048 3072,4096,2048 1024,2112,7168 1536,7168,7168 768,12288,7168 384,24576,7168
        512,9216,16384 256,24576,2048"
for round in 1 2; do
  for setting in model DG_TUNE_CLUSTER=2; do
    # shellcheck disable=SC2086  # the shapes are words
    env $([ $setting = model ] || echo $setting) DG_PRINT_CONFIGS=1 timeout -k 5 120 \
      python benchmarks/experiments/dense_rows.py $shapes 2>&1 | grep -E " us |rror|jax_deepgemm: dense" |
      sed "s/^/$setting r$round /"
  done
done | tee "$OUT/cluster_b_scope.txt"
