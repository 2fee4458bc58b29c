#!/usr/bin/env bash
# Paired stages (NOTES 48), as the heuristics take them (pipelined kernels with >= 10 stages): the GPU tests that run
# paired kernels (forced in test_gpu_configs.py's pipe-paired and tail-split cases, by default in split K and the
# dense / grouped files), then the rows that pair by default against DG_TUNE_PAIRED_STAGES=0, alternating, three
# rounds. One device call: bash benchmarks/experiments/paired_stages.sh
# (Session 21's first call measured an earlier revision, pairing every pipelined kernel with >= 4 stages, against
# the unpaired headers: logs in tests/gpu_runs/2026-11-26_session21/paired_stages/.)
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/paired_cache
tests() {  # name, pytest arguments
  timeout -k 5 380 python -I -m pytest "${@:2}" -q -p no:cacheprovider >"$OUT/tests_$1.log" 2>&1
  echo "$1: $(grep -E "passed|failed" "$OUT/tests_$1.log" | tail -1)"; grep -E "^FAILED" "$OUT/tests_$1.log" | head -5
}
tests paired tests/test_gpu_configs.py -k pipe-paired &
tests tail tests/test_gpu_configs.py -k tail_split &
tests split_k tests/test_gpu_configs.py -k split_k &
tests dense tests/test_gpu_dense.py &
tests grouped tests/test_gpu_grouped.py &
wait
echo "tests done at $((SECONDS - start)) s"
rows=(64,2112,7168 64,4096,7168 64,7168,16384 64,7168,2048 128,2112,7168 128,4096,7168 128,7168,16384)
for round in 1 2 3; do
  for side in paired unpaired; do
    if [ $side = paired ]; then unset DG_TUNE_PAIRED_STAGES; else export DG_TUNE_PAIRED_STAGES=0; fi
    timeout -k 5 100 python benchmarks/experiments/dense_rows.py "${rows[@]}" 2>&1 | grep -E " us |rror" |
      sed "s/^/$side r$round /"
  done
done 2>&1 | tee "$OUT/paired_rows.txt"
echo "elapsed $((SECONDS - start)) s"
