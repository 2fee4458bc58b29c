#!/usr/bin/env bash
# The MoE layer's weighted SwiGLU backward in three forms (swiglu_backward.py): XLA's fusions and kernel time each.
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -q -e . > "$OUT/logs/build.log" 2>&1 || { tail "$OUT/logs/build.log"; exit 1; }
timeout -k 5 200 python benchmarks/experiments/swiglu_backward.py 2>&1 | grep -v -i warning | tee "$OUT/forms.txt"
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
