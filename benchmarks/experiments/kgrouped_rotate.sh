#!/usr/bin/env bash
# k-grouped tiles in a rotated order (kgrouped_rotate.patch): tile t = G q + j is tile q of group (j + q) % G, so each
# round's CTAs take tiles of every group and their epilogues (D stores, C loads) spread out in time instead of all
# CTAs storing at once. Both sides in clusters of 2 (DG_TUNE_CLUSTER=2): the patched kernel spills 8 bytes inside
# its K loop at cluster 1 (NVRTC 13.5, here), not in a cluster. The k-grouped GPU tests with the patch first, then
# the benchmark's k-grouped rows, rot / old, two rounds, and old at its default cluster (1) for reference.
# One device call, from the repo root: bash benchmarks/experiments/kgrouped_rotate.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side rot benchmarks/experiments/kgrouped_rotate.patch || exit 1
ab_use rot
DG_TUNE_CLUSTER=2 DG_JIT_CACHE_DIR=/tmp/ab_cache_rot JDG_TEST_LIMIT=200 ab_tests rot tests/test_gpu_grouped.py \
  -k k_grouped
ab_use old
AB_SIDES="rot old" AB_ROUNDS=2 DG_TUNE_CLUSTER=2 ab_grouped k_grouped | tee "$OUT/ab.txt"
AB_SIDES="old" ab_grouped k_grouped | sed "s/^old /old_cluster1 /" | tee -a "$OUT/ab.txt"
ab_use old
echo "elapsed $((SECONDS - start)) s"
