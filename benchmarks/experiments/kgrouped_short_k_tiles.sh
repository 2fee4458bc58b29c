#!/usr/bin/env bash
# The MoE step's k-grouped weight gradients (16 groups of ~1024 tokens, f32 out without C; NOTES 103: 750-810 TFLOPS
# in 256 x 128 tiles in clusters of 2, ~20% of a tile in its epilogue) in the tiles the heuristics would otherwise
# pass over: 128 x 128 with the accumulator pipeline (its promotion overlaps the next K block's wgmmas; half the f32
# bytes per epilogue), alone and in clusters of 2, 128 x 128 without the pipeline, and the 256 x 128 tiles alone. Two
# rounds, alternating; the benchmark's 4-group row as the control. Measured in NOTES 104 (the default stays). From the
# repo root:
#   bash benchmarks/experiments/kgrouped_short_k_tiles.sh
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache-short-k-tiles
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
rows=(k_grouped_no_c=16,7168,4096,1024 k_grouped_no_c=16,2048,7168,1024 k_grouped_no_c=4,4096,7168,8192)
variants=("" "DG_TUNE_BLOCK_M=128" "DG_TUNE_BLOCK_M=128 DG_TUNE_CLUSTER=2" "DG_TUNE_BLOCK_M=128 DG_TUNE_ACC_PIPELINE=0"
          "DG_TUNE_CLUSTER=1")
for round in 1 2; do
  for v in "${variants[@]}"; do
    env $v DG_PRINT_CONFIGS=1 timeout -k 5 100 python benchmarks/experiments/grouped_rows.py "${rows[@]}" 2>&1 |
      grep -E " us |rror|k_grouped" | sed "s/^/[${v:-default}] r$round /"
  done
done | tee "$OUT/short_k_tiles.txt"
