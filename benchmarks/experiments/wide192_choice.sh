#!/usr/bin/env bash
# The model's new choice on N = 2112 rows (NOTES 32): 128 x 192 tiles (the default now) against the 256 x 64 tiles it
# took before (forced; the cluster rule as before), kernel time, alternating, two rounds. One device call.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_PRINT_CONFIGS=1
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
shapes="4096,2112,512 4096,2112,2048 4096,2112,7168 4096,2112,16384 8192,2112,7168"
for round in 1 2; do for v in new old; do
  if [ $v = old ]; then export DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=64; else unset DG_TUNE_BLOCK_M DG_TUNE_BLOCK_N; fi
  timeout -k 5 100 python benchmarks/experiments/dense_rows.py $shapes 2>&1 | grep -E " us |rror|jax_deepgemm: fp8" |
    sed -E "s/^/$v r$round /; s/num_sms.*-> //; s/threads.*cluster=/cluster=/; s/ grid.*//"
done; done | tee "$OUT/choice.txt"
