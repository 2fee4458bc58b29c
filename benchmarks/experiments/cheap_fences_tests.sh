#!/usr/bin/env bash
# The exchanges' GPU tests with the working tree's headers (NOTES 49), in two processes, and compute-sanitizer
# racecheck of split K's and the tail split's exchanges (small shapes). One device call:
#   bash benchmarks/experiments/cheap_fences_tests.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/fences_tests
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
JDG_TEST_LIMIT=330 ab_tests split_k tests/test_gpu_configs.py -k split_k &
JDG_TEST_LIMIT=330 ab_tests tail_split tests/test_gpu_configs.py -k tail_split &
race="(split_k and bm64-bn32 and (many or scan)) or (tail_split and bm128-bn64 and (masked or bfloat16-3x6))"
timeout -k 5 330 "$CS" --tool racecheck --error-exitcode 1 python -I -m pytest tests/test_gpu_configs.py -k "$race" \
  -v -p no:cacheprovider >"$OUT/racecheck.log" 2>&1 &
wait
grep -E "RACECHECK SUMMARY|PASSED|FAILED|passed|failed" "$OUT/racecheck.log" | tail -20
echo "elapsed $((SECONDS - start)) s"
