#!/usr/bin/env bash
# benchmarks/NOTES.md 14: sustained SM clock and power of the 4096 x 7168 x 16384 kernel per tile choice.
set -uo pipefail
export DG_PRINT_CONFIGS=1 PYTHONUNBUFFERED=1
for v in default DG_TUNE_CLUSTER=2 "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128" \
         "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 DG_TUNE_ACC_PIPELINE=0" "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192"; do
  echo "## $v"
  env ${v/default/} timeout -k 5 60 python benchmarks/experiments/sustained_clock.py "${1:-4096,7168,16384}" 3 2>&1 |
    grep -E "sustained|jax_deepgemm: |Error"
done
