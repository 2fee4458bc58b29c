#!/usr/bin/env bash
# The masked rows of the grouped table (grouped_rows.py: our kernels only) under forced tile choices, to see whether
# another configuration beats the model's 128 x 128 pick anywhere (NOTES 28). One device call, from the repo root:
#   bash benchmarks/experiments/masked_configs.sh
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache-masked
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
# The model's own choice first and last: the two show the drift over the call.
for setting in "" DG_TUNE_BLOCK_N=112 DG_TUNE_BLOCK_N=160 DG_TUNE_BLOCK_N=192 \
               "DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128" DG_TUNE_CLUSTER=2 DG_TUNE_TAIL_SPLIT=1 \
               DG_TUNE_TAIL_SPLIT=0 ""; do
  # shellcheck disable=SC2086  # the setting is words
  env $setting DG_PRINT_CONFIGS=1 timeout -k 5 120 python benchmarks/experiments/grouped_rows.py masked 2>&1 |
    grep -E " us |jax_deepgemm: m_grouped_masked" | sed "s/^/${setting:-model} | /"
done | tee "$OUT/masked_configs.txt"
