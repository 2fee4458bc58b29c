#!/usr/bin/env bash
# 192-row tiles for per-row B scales in clusters of 2 sharing A (NOTES 71): NOTES 46 measured BLOCK_M 192 alone
# (three consumer warpgroups of one wave) 2-8% slower than 256 x 128 on k-grouped rows, held by its copies; a
# cluster halves the A rows each CTA copies. Applies block_m_192.patch (BLOCK_M 192 alone or in clusters sharing A,
# forced with DG_TUNE_BLOCK_M=192: the heuristics never pick it). Runs the 192-row configuration tests first (alone
# and in clusters, both epilogues), then the k-grouped rows: the model's pick, 192 alone, 192 in clusters,
# alternating, two rounds. Measured (NOTES 71): clusters take 192 from +2% to +8.5% to -0.8% to +3.7% against
# 256 x 128; not taken. One device call, from the repo root:
#   bash benchmarks/experiments/block_m_192_clusters.sh
set -uo pipefail
git apply benchmarks/experiments/block_m_192.patch || exit 1
. benchmarks/experiments/ab_headers.sh
ab_setup
JDG_TEST_LIMIT=170 ab_tests bm192 tests/test_gpu_configs.py -k "block_m_192"
for round in 1 2; do
  for v in model 192c1 192c2; do
    case $v in
      model) force="" ;;
      192c1) force="DG_TUNE_BLOCK_M=192 DG_TUNE_CLUSTER=1" ;;
      192c2) force="DG_TUNE_BLOCK_M=192 DG_TUNE_CLUSTER=2" ;;
    esac
    # shellcheck disable=SC2086  # the settings are words
    env $force DG_JIT_CACHE_DIR=/tmp/jdg-cache-$v timeout -k 5 110 python benchmarks/experiments/grouped_rows.py \
      k_grouped 2>&1 | grep -E " us |rror" | sed "s/^/$v r$round /"
  done
done 2>&1 | tee "$OUT/ab.txt"
echo "elapsed $((SECONDS - start)) s"
