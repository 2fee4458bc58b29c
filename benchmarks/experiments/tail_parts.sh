#!/usr/bin/env bash
# The tail split in clusters of four (NOTES 79; tail_parts.patch, applied to the device's copy: DG_TUNE_TAIL_PARTS=4):
# a last round of at most a quarter of the CTAs splits each tile four ways. Measured, not taken: an H100 runs only 30
# such clusters at once. One device call, from the repo root (carry .clusterprobe, where
# cluster_occupancy.cu was built): how many clusters of 2 and 4 run at once; the tail split's GPU tests in both
# cluster sizes and the masked GPU tests in clusters of four; then the masked long-K rows over four masked_m draws
# (masked_draws.py), pairs against fours, on 132 SMs and on 128 (32 clusters of four), pairs first and last.
#   bash benchmarks/experiments/tail_parts.sh
set -uo pipefail
git apply benchmarks/experiments/tail_parts.patch || { echo "the patch does not apply"; exit 1; }
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-tail-parts
[ -x .clusterprobe/cluster_occupancy ] && ./.clusterprobe/cluster_occupancy | tee "$OUT/cluster_occupancy.txt"
timeout -k 5 240 python -I -m pytest tests/test_gpu_configs.py -q -rs -p no:cacheprovider -k tail_split \
  >"$OUT/tests_tail_split.log" 2>&1
grep -E "^FAILED|^ERROR|passed|failed" "$OUT/tests_tail_split.log" | tail -8
DG_TUNE_TAIL_PARTS=4 timeout -k 5 150 python -I -m pytest tests/test_gpu_grouped.py -q -rs -p no:cacheprovider \
  -k masked >"$OUT/tests_masked_parts4.log" 2>&1
grep -E "^FAILED|^ERROR|passed|failed" "$OUT/tests_masked_parts4.log" | tail -8
export JDG_SHAPES=0,2,4,6,8  # the long-K shapes, where the model takes the tail split
for setting in "" "DG_TUNE_TAIL_PARTS=4" "JDG_NUM_SMS=128" "JDG_NUM_SMS=128 DG_TUNE_TAIL_PARTS=4" ""; do
  # shellcheck disable=SC2086  # the setting is words
  env $setting timeout -k 5 100 python benchmarks/experiments/masked_draws.py 4 2>&1 | grep -E " us |rror" |
    sed "s/^/${setting:-pairs 132} | /"
done | tee "$OUT/tail_parts.txt"
echo "elapsed $((SECONDS - start)) s"
