#!/usr/bin/env bash
# B multicast as the default for dense clusters of tiles wider than tall (NOTES 35): its GPU tests (forced B
# multicast in five tile shapes, the cluster-2 configurations of test_gpu_configs, test_gpu_dense), then the
# default against DG_TUNE_MULTICAST_B=0 (A shared, the old default) on rows where the model takes it, same build,
# alternating, two rounds. One device call, from the repo root: bash benchmarks/experiments/multicast_b_default.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-mbd
run_tests() {  # label, then pytest arguments
  local label=$1; shift
  timeout -k 5 300 python -I -m pytest "$@" -q -rs -p no:cacheprovider 2>&1 | grep -v -E "^E[0-9]{4} |^$" \
    >"$OUT/tests_$label.log"
}
run_tests multicast_b tests/test_gpu_configs.py -k "multicast_b or bm128-x2" &
run_tests dense tests/test_gpu_dense.py &
wait
for f in "$OUT"/tests_*.log; do echo "$f: $(tail -n 1 "$f")"; done
shapes="4096,2112,7168 8192,2112,7168 3072,7168,7168 2048,9216,4096 4096,1536,16384 2048,5120,7168 4096,6400,7168 3072,1536,7168"
for round in 1 2; do
  for setting in default DG_TUNE_MULTICAST_B=0; do
    # shellcheck disable=SC2086  # the shapes are words
    env $([ $setting = default ] || echo $setting) timeout -k 5 120 python benchmarks/experiments/dense_rows.py $shapes 2>&1 |
      grep -E " us |rror" | sed "s/^/$setting r$round /"
  done
done | tee "$OUT/ab.txt"
