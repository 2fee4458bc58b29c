#!/usr/bin/env bash
# DeepGEMM's configuration on the dense M = 4096 rows below K = 16384 (NOTES 77): its 256 x 128 tiles run in
# clusters of 2 sharing A on 128 CTAs at every one of them (its launcher, NOTES 76), ours without clusters there
# (step 5 takes them from 128 K blocks on; NOTES 29 measured them on 132 CTAs only). Same call, two rounds:
#   default | clusters (DG_TUNE_CLUSTER=2; 128 CTAs from 32 K blocks by step 14) | clusters on 128 CTAs | 128 CTAs
# One device call, from the repo root: bash benchmarks/experiments/mid_k_clusters.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/mid_k_cache
rows=(4096,4096,7168 4096,7168,7168 4096,4096,4096 4096,7168,2048 4096,24576,1536 4096,7168,16384)
for round in 1 2; do
  for variant in default clusters clusters_128 sms_128; do
    case $variant in
      default) cmd=(python benchmarks/experiments/dense_rows.py) ;;
      clusters) cmd=(env DG_TUNE_CLUSTER=2 python benchmarks/experiments/dense_rows.py) ;;
      clusters_128) cmd=(env DG_TUNE_CLUSTER=2 python benchmarks/experiments/sms_rows.py 128 dense_rows.py) ;;
      sms_128) cmd=(python benchmarks/experiments/sms_rows.py 128 dense_rows.py) ;;
    esac
    DG_PRINT_CONFIGS=1 timeout -k 5 120 "${cmd[@]}" "${rows[@]}" 2>&1 | grep -E " us |rror|jax_deepgemm:" |
      sed "s/^/$variant r$round /"
  done
done | tee "$OUT/mid_k_clusters.txt"
echo "elapsed $((SECONDS - start)) s"
