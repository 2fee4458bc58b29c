#!/usr/bin/env bash
# The MoE step's ragged shapes (16 groups of ~1024 rows) with 128-row tiles forced (128 x 128, 128 x 192; clusters as
# the model says), against the model's 256 x 128 in clusters of 2: a 128-row tile's tail wastes half as much.
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -q -e . > "$OUT/logs/build.log" 2>&1 || { tail "$OUT/logs/build.log"; exit 1; }
for tiles in model 128x128 128x192; do
  if [ $tiles = model ]; then unset DG_TUNE_BLOCK_M DG_TUNE_BLOCK_N
  else export DG_TUNE_BLOCK_M=${tiles%x*} DG_TUNE_BLOCK_N=${tiles#*x}; fi
  timeout -k 5 120 python benchmarks/experiments/ragged_tail_cost.py 2>&1 | grep "^round" | sed "s/^/$tiles /" |
    tee -a "$OUT/tail_cost.txt"
done
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
