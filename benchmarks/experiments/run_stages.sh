#!/usr/bin/env bash
# Does the 256-row K loop wait for data because 3 stages are too few? (NOTES 16: its consumers wait on full stages
# 10% of the time at 132 and at 33 CTAs alike.) Cycles per K block with the TMA-store epilogue (3 stages at
# 256 x 128) and without it (its 64 KB staging tile freed: 4 stages), at 132 and 33 CTAs. Run after the build.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=3 DG_JIT_CACHE_DIR=/tmp/st-cache
run() {  # label, env assignments, op, shape
  echo "## $3 $4 $1 $2"
  env $2 timeout -k 5 90 python tools/profile_one.py "$3" "$4" 2>&1 | grep -v -E "^I[0-9]|^E[0-9]{4} "
}
{
  for sms in 132 33; do
    run "tma_store_${sms}_ctas" "JDG_PROFILE_SMS=$sms" dense 4096,7168,16384
    run "4_stages_${sms}_ctas" "JDG_PROFILE_SMS=$sms DG_TUNE_TMA_STORE=0" dense 4096,7168,16384
  done
  run tma_store "JDG_X=0" dense 4096,2112,7168
  run 5_stages "DG_TUNE_TMA_STORE=0" dense 4096,2112,7168
} >"$OUT/stages.log"
python tools/waits_summary.py <"$OUT/stages.log" | tee "$OUT/stages_summary.txt"
gzip -f "$OUT/stages.log"
