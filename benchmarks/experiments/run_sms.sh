#!/usr/bin/env bash
# Does the K loop scale with the SMs that load at once? The DG_PROFILE_WAITS kernel's cycles per K block with the
# persistent grid capped at 132 / 66 / 33 CTAs (JDG_PROFILE_SMS), forced tiles so the tile stays the same: if the
# cycles fall with fewer CTAs, the loads contend in L2 (all SMs together); if not, each SM's own feed or loop limits.
# Run from the repo root on the GPU machine after the build; logs under $OUT.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=5 DG_JIT_CACHE_DIR="${DG_JIT_CACHE_DIR:-/tmp/jdg-cache}"
run() {
  echo "## $* $(env | grep -E '^(DG_TUNE|JDG_PROFILE_SMS)' | sort | tr '\n' ' ')"
  timeout -k 5 90 python tools/profile_one.py "$@" 2>&1 | grep -v -E "^I[0-9]|^E[0-9]{4} "
}
{
  for sms in 132 66 33; do
    JDG_PROFILE_SMS=$sms DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 run dense 4096,7168,16384
    JDG_PROFILE_SMS=$sms DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 run dense 4096,7168,16384
  done
  JDG_PROFILE_SMS=132 DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=2 run dense 4096,7168,16384
} >"$OUT/sms.log"
python tools/waits_summary.py <"$OUT/sms.log" | tee "$OUT/sms_summary.txt"
