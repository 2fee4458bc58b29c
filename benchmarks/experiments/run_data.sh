#!/usr/bin/env bash
# Does the tensor pipe's rate in cycles depend on the data? The wgmma-rate and ring microbenchmarks with patterned
# and with random FP8 bytes, then the GEMM kernel's DG_PROFILE_WAITS cycles per K block with random normal and with
# constant inputs (JDG_PROFILE_DATA=const). Run from the repo root on the GPU machine after the build, with
# benchmarks/experiments/wgmma_rate.bin built (see wgmma_rate.cu); logs under $OUT.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=5 DG_JIT_CACHE_DIR="${DG_JIT_CACHE_DIR:-/tmp/jdg-cache}"
timeout -k 5 120 benchmarks/experiments/wgmma_rate.bin | tee "$OUT/wgmma_patterned.txt"
timeout -k 5 120 benchmarks/experiments/wgmma_rate.bin random | tee "$OUT/wgmma_random.txt"
run() {
  echo "## $* $(env | grep -E '^(DG_TUNE|JDG_PROFILE_DATA)' | sort | tr '\n' ' ')"
  timeout -k 5 90 python tools/profile_one.py "$@" 2>&1 | grep -v -E "^I[0-9]|^E[0-9]{4} "
}
{
  for data in normal const; do
    JDG_PROFILE_DATA=$data DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 run dense 4096,7168,16384
    JDG_PROFILE_DATA=$data DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 run dense 4096,7168,16384
  done
} >"$OUT/data.log"
python tools/waits_summary.py <"$OUT/data.log" | tee "$OUT/data_summary.txt"
gzip -f "$OUT/data.log"
