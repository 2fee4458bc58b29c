#!/usr/bin/env bash
# The MoE router's float32 product as XLA runs it now (HIGHEST), as BF16_BF16_F32_X6 and as exact bf16 pieces.
set -u
OUT="${OUT:-./gpu-out}"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -q -e . > "$OUT/build.log" 2>&1 || { tail "$OUT/build.log"; exit 1; }
cd benchmarks/experiments
for round in 1 2; do
  timeout -k 5 150 python router_dot.py 2>&1 | grep -v -i warning | sed "s/^/r$round /" | tee -a "$OUT/router.txt"
done
