#!/usr/bin/env bash
# The K loop's cycles per K block measured again with the repaired DG_PROFILE_WAITS build (no printf in the GEMM
# kernel, so ptxas no longer serializes its wgmmas; NOTES 16): the profile tests, the profiled kernel's time against
# the plain one in the benchmark, then cycles per K block of the tiles NOTES 13-15 profiled with the broken build.
# Run from the repo root on the GPU machine after the build; logs under $OUT.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
timeout -k 5 150 python -I -m pytest tests/test_gpu_dense.py tests/test_jit_runtime.py -k profile -q -rs \
  -p no:cacheprovider 2>&1 | tail -4 | tee "$OUT/profile_tests.txt"
for pw in 0 1; do
  DG_PROFILE_WAITS=$pw DG_JIT_CACHE_DIR=/tmp/pf-cache-$pw timeout -k 5 120 python -m jax_deepgemm bench --only dense \
    --iters 20 --output "$OUT/bench_pw$pw.json" --shape 4096,7168,16384 --shape 4096,2112,7168 2>&1 |
    grep -E "^ +[0-9]" | sed "s/^/profile_waits=$pw /"
done | tee "$OUT/profile_bench.txt"
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=3 DG_JIT_CACHE_DIR=/tmp/pf-cache-1
run() {  # label, env assignments, op, shape
  echo "## $3 $4 $1 $2"
  env $2 timeout -k 5 90 python tools/profile_one.py "$3" "$4" 2>&1 | grep -v -E "^I[0-9]|^E[0-9]{4} "
}
{
  run default "JDG_X=0" dense 4096,7168,16384
  run default_33_ctas "JDG_PROFILE_SMS=33" dense 4096,7168,16384
  run 128x128_pipelined "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128" dense 4096,7168,16384
  run 128x128_plain "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 DG_TUNE_ACC_PIPELINE=0" dense 4096,7168,16384
  run 128x128_33_ctas "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 JDG_PROFILE_SMS=33" dense 4096,7168,16384
  run default "JDG_X=0" dense 4096,2112,7168
  run 128x192 "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192" dense 4096,2112,7168
  run default "JDG_X=0" dense 128,4096,7168
  run default "JDG_X=0" contiguous 4,8192,4096,7168
} >"$OUT/profile.log"
python tools/waits_summary.py <"$OUT/profile.log" | tee "$OUT/profile_summary.txt"
gzip -f "$OUT/profile.log"
