#!/usr/bin/env bash
# Who waits in 4096 x 2112 x 7168's 128 x 192 kernels on 118 and 132 CTAs (NOTES 80: whole-width tiles ran 121.7 us
# on 132 CTAs and 109.6 on 118, DeepGEMM's 95.8 / 93.6): the profile build (DG_PROFILE_WAITS) of our pick, without
# clusters, and whole width (experiments/whole_width_offsets.patch); consumers' cycles per K block, their full-stage
# waits, the producers' empty-stage waits and the SM clock (tools/waits_summary.py).
#   bash benchmarks/experiments/waits_2112_grid.sh
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=10
git apply benchmarks/experiments/whole_width_offsets.patch || exit 1
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
run() {
  echo "## $* sms=$JDG_PROFILE_SMS $(env | grep -E '^DG_TUNE' | sort | tr '\n' ' ')"
  timeout -k 5 90 python tools/profile_one.py "$@" 2>&1 | grep -v -E "^E[0-9]{4} |^$|^I[0-9]"
}
{
  for sms in 118 132; do
    export JDG_PROFILE_SMS=$sms
    run dense 4096,2112,7168
    DG_TUNE_CLUSTER=1 run dense 4096,2112,7168
    DG_TUNE_CLUSTER=1 DG_TUNE_SPLIT_HALVES=0 run dense 4096,2112,7168
  done
} >"$OUT/waits.log"
git apply -R benchmarks/experiments/whole_width_offsets.patch
python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
grep "jax_deepgemm: " "$OUT/waits.log" | sort -u | tee "$OUT/waits_configs.txt"
