#!/usr/bin/env bash
# Split K at the GPU's own memory bandwidth (NOTES 30): the rows whose choice changes at an H200's 4917 GB/s,
# DG_TUNE_SPLIT_K=1 (never) against unset (the model, now reading the GPU's bandwidth), alternating, two rounds,
# kernel time only (dense_rows.py); then the dense GPU tests at the default choice. One device call; logs under $OUT.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_PRINT_CONFIGS=1
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/machine.txt"
python -m jax_deepgemm info 2>&1 | grep kernels: | tee -a "$OUT/machine.txt"
shapes="64,4096,7168 128,4096,7168 256,2112,7168 128,4096,4096 192,2112,7168 64,4096,4096"
for round in 1 2; do for sk in 1 default; do
  if [ $sk = 1 ]; then export DG_TUNE_SPLIT_K=1; else unset DG_TUNE_SPLIT_K; fi
  DG_JIT_CACHE_DIR=/tmp/hbm-cache-$sk timeout -k 5 120 python benchmarks/experiments/dense_rows.py $shapes 2>&1 |
    grep -E " us |jax_deepgemm: fp8_gemm" | sed "s/^/sk=$sk r$round /"
done; done | tee "$OUT/hbm_split.txt"
unset DG_TUNE_SPLIT_K DG_PRINT_CONFIGS
timeout -k 5 240 python -I -m pytest tests/test_gpu_dense.py -q -rs -p no:cacheprovider 2>&1 |
  grep -v -E "^E[0-9]{4} |^$" >"$OUT/tests_dense.log"
tail -3 "$OUT/tests_dense.log"
