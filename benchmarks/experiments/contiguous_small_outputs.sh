#!/usr/bin/env bash
# Step 12 after NOTES 87 (contiguous groups over K < 6144 keep 128-row tiles up to 4 Mi output elements per group):
# the new default against DG_TUNE_BLOCK_M=256 (the old pick there) on held-out layers, two rounds; then the grouped
# GPU tests (contiguous cases), whose configurations the change moves. Logs under $OUT.
#   bash benchmarks/experiments/contiguous_small_outputs.sh
. "$(dirname "$0")/prelude.sh"
build
layers=(h3584k4=16,10240,3584,4096 h2560k46=12,10752,2560,4608 h2304k5=10,12000,2304,5120 h5120k4=24,10752,5120,4096
        h1024k4=32,12800,1024,4096 qwen235_up)
moe_contiguous_rounds contiguous_small_outputs.txt bm256 DG_TUNE_BLOCK_M=256 "${layers[@]}"
timeout -k 5 300 python -m pytest -q tests/test_gpu_grouped.py -k contiguous -p no:cacheprovider \
  >"$OUT/test_gpu_grouped_contiguous.txt" 2>&1; tail -3 "$OUT/test_gpu_grouped_contiguous.txt"
