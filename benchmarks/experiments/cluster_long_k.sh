#!/usr/bin/env bash
# Clusters of 2 on dense 256 x 128 tiles over long K (NOTES 29): DG_TUNE_CLUSTER=1 against 2, alternating, two
# rounds, kernel time only (dense_rows.py). One device call; log under $OUT.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/machine.txt"
shapes="4096,7168,16384 4096,4096,16384 8192,7168,16384 4096,7168,8192 8192,4096,8192 4096,7168,4096 4096,7168,32768"
shapes="${SHAPES:-$shapes}"
for round in 1 2; do for cl in 1 2; do
  DG_TUNE_CLUSTER=$cl DG_JIT_CACHE_DIR=/tmp/cl-cache-$cl timeout -k 5 150 \
    python benchmarks/experiments/dense_rows.py $shapes 2>&1 | grep -E " us " | sed "s/^/cl=$cl r$round /"
done; done | tee "$OUT/cluster_long_k.txt"
