#!/usr/bin/env bash
# The C prefetch as landed (heuristics step 13; NOTES 74): the GPU tests that take it (k-grouped by default, forced
# dense / split-K / 128-row k-grouped cases), compute-sanitizer memcheck of its hostile-size and forced cases, then
# the benchmark's k-grouped rows with the default (1 K block) against DG_TUNE_C_PREFETCH=0, two rounds.
# One device call, from the repo root: bash benchmarks/experiments/c_prefetch_landed.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/cpf_cache
JDG_TEST_LIMIT=200 ab_tests k_grouped tests/test_gpu_grouped.py tests/test_gpu_configs.py \
  -k "k_grouped and not configs or c_prefetch or (k_grouped and bm256)"
JDG_TEST_LIMIT=120 ab_tests dense tests/test_gpu_dense.py
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout -k 5 200 "$CS" --tool memcheck --error-exitcode 1 python -I -m pytest tests/test_gpu_grouped.py \
  tests/test_gpu_configs.py -q -p no:cacheprovider -k "k_grouped_hostile or c_prefetch" >"$OUT/memcheck.log" 2>&1
echo "memcheck: exit $?"; grep -E "ERROR SUMMARY|passed|failed" "$OUT/memcheck.log" | tail -3
pkill -9 -f "python -I -m pytest tests/test_gpu" || true
for round in 1 2; do for d in default 0; do
  if [ $d = default ]; then unset DG_TUNE_C_PREFETCH; else export DG_TUNE_C_PREFETCH=$d; fi
  timeout -k 5 100 python benchmarks/experiments/grouped_rows.py k_grouped 2>&1 | grep -E " us |rror" |
    sed "s@^@d=$d r$round @"
done; done | tee "$OUT/ab.txt"
echo "elapsed $((SECONDS - start)) s"
