#!/usr/bin/env bash
# 2048 x 2112 x 7168, the dense table's own row at ~990 TFLOPS on an H200: the model's 256 x 64 tiles (264 = two
# rounds exactly) against tiles whose last round is short and split over K by pairs of CTAs (the tail split, forced),
# and 128 x 192 on 88 CTAs. Each setting in its own process (DG_TUNE_* are read once), the shape timed twice per
# process, the model's setting first and last.
#   bash benchmarks/experiments/dense_2112_tail.sh [M,N,K ...]
shapes=("${@:-2048,2112,7168}")
settings=(
  ""
  "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=1 DG_TUNE_TAIL_SPLIT=1"
  "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 DG_TUNE_TAIL_SPLIT=1"
  "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192"
  "DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=1 DG_TUNE_TAIL_SPLIT=1"
  ""
)
for setting in "${settings[@]}"; do
  # shellcheck disable=SC2086
  env $setting python benchmarks/experiments/dense_rows.py "${shapes[@]}" "${shapes[@]}" 2>&1 |
    grep -E "TFLOPS|Error" | sed "s/^/[${setting:-model}] /"
done
