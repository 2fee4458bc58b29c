#!/usr/bin/env bash
# Who waits in 4096 x 2112 x 7168 (NOTES 31): the profile build (DG_PROFILE_WAITS) of the default 256 x 64 tiles and
# of 128 x 192 tiles without / with clusters of 2, against the 256 x 128 rows for reference; consumers' cycles per K
# block, their full-stage waits, the producers' empty-stage waits and the SM clock (tools/waits_summary.py).
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=10
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
run() {
  echo "## $* $(env | grep -E '^DG_TUNE' | sort | tr '\n' ' ')"
  timeout -k 5 90 python tools/profile_one.py "$@" 2>&1 | grep -v -E "^E[0-9]{4} |^$|^I[0-9]"
}
{
  run dense 4096,2112,7168
  DG_TUNE_CLUSTER=1 run dense 4096,2112,7168
  DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 DG_TUNE_CLUSTER=1 run dense 4096,2112,7168
  DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 DG_TUNE_CLUSTER=2 run dense 4096,2112,7168
  DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 DG_TUNE_CLUSTER=2 DG_TUNE_SPLIT_HALVES=0 run dense 4096,2112,7168
  run dense 4096,7168,16384
  run dense 4096,7168,2048
  run dense 4096,32768,512
} >"$OUT/waits.log"
python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
grep "jax_deepgemm: " "$OUT/waits.log" | sort -u | tee "$OUT/waits_configs.txt"
