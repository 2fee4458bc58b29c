#!/usr/bin/env bash
# Step 12 (256-row tiles for contiguous groups of >= 384 rows) where N is a multiple of 192: moe_models.sh found
# 128 x 192 tiles 5-9% faster on qwen235_up (N = 3072, K = 4096), unlike the N = 4096 / 7168 rows step 12 was
# measured on. The pick against DG_TUNE_BLOCK_M=128 on N = 1536 / 3072 / 6144 and three controls, two rounds.
#   bash benchmarks/experiments/moe_n192.sh
. "$(dirname "$0")/prelude.sh"
build
layers=(q3072k4=16,8192,3072,4096 q3072k7=16,8192,3072,7168 w3072k4=8,8192,3072,4096 n6144k4=16,8192,6144,4096
        n1536k4=16,8192,1536,4096 n6144k7=32,16384,6144,7168 n4096k4=16,8192,4096,4096 n2048k4=16,8192,2048,4096
        n7168k4=16,8192,7168,4096)
for round in 1 2; do
  for run in default bm128; do
    env=(); [ $run = bm128 ] && env=(DG_TUNE_BLOCK_M=128)
    env "${env[@]}" timeout -k 5 200 python benchmarks/experiments/moe_models.py "$run$round" "${layers[@]}" 2>&1 |
      grep -vE "^(W|I)[0-9]{4}|absl" | tee -a "$OUT/moe_n192.txt"
  done
done
