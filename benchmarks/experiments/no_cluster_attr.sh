#!/usr/bin/env bash
# Kernels without clusters launched with no cluster attribute (no_cluster_attr.patch, host side; NOTES 81). Ours
# always passes CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, with size 1 where there is no cluster; DeepGEMM passes none
# there. Session 41's Nsight Compute counts (4096 x 2112 x 7168, both on 118 CTAs without clusters): the SMs receive
# the same sectors, but ours reaches L2 as 18% more requests; if a cluster launch places CTAs differently over the
# GPCs, fewer same-line requests of neighbouring CTAs would be merged on the way. Dense rows whose pick has no
# cluster, with / without the attribute (one build, JDG_EXP_NO_CLUSTER_ATTR), alternating, two rounds.
#   bash benchmarks/experiments/no_cluster_attr.sh   (on the tree before 414e5ce, which landed it for dense kernels)
set -uo pipefail
git apply benchmarks/experiments/no_cluster_attr.patch ||  # host code: before the build
  { echo "no_cluster_attr.patch applies to the tree before 414e5ce, which landed it for dense kernels"; exit 1; }
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/nca-cache
rows=(4096,2112,7168 4096,7168,2048 4096,32768,512 4096,24576,1536 4096,4096,7168)
for round in 1 2; do
  for side in attr none; do
    if [ "$side" = none ]; then export JDG_EXP_NO_CLUSTER_ATTR=1; else unset JDG_EXP_NO_CLUSTER_ATTR; fi
    timeout -k 5 100 python benchmarks/experiments/dense_rows.py "${rows[@]}" 2>&1 | grep -E " us |rror" |
      sed "s/^/$side r$round /"
  done
done | tee "$OUT/no_cluster_attr.txt"
git apply -R benchmarks/experiments/no_cluster_attr.patch
