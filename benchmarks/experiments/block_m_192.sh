#!/usr/bin/env bash
# 192-row tiles for per-row B scales (NOTES 46; measured, not taken): applies block_m_192.patch (three consumer
# warpgroups of one wave, forced with DG_TUNE_BLOCK_M=192), runs its GPU tests and the k-grouped ones, then the
# k-grouped rows with DG_TUNE_BLOCK_M=192 against the model's pick (256 x 128), alternating, same build. (The patch
# was refreshed in session 34 for the kernel of that time and now takes clusters sharing A too: NOTES 71,
# block_m_192_clusters.sh.) One call:
#   bash benchmarks/experiments/block_m_192.sh
set -uo pipefail
git apply benchmarks/experiments/block_m_192.patch || exit 1
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_tests bm192 tests/test_gpu_configs.py -k "block_m_192" &
ab_tests kgrouped tests/test_gpu_grouped.py -k "k_grouped" &
wait
for round in 1 2; do
  for v in 192 model; do
    if [ $v = 192 ]; then export DG_TUNE_BLOCK_M=192; else unset DG_TUNE_BLOCK_M; fi
    timeout -k 5 150 python benchmarks/experiments/grouped_rows.py k_grouped 2>&1 | grep -E " us |rror" |
      sed "s/^/$v r$round /"
  done
done 2>&1 | tee "$OUT/block_m_192.txt"
unset DG_TUNE_BLOCK_M
echo "elapsed $((SECONDS - start)) s"
