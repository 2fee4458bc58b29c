#!/usr/bin/env bash
# Every tile a masked GEMM could take, forced, on the benchmark table's six masked rows (0.76-0.98x DeepGEMM's H200
# numbers at 6d866b0, STATUS) and moe_models.py's five decode rows: is the model's tile (step 6: at most 128 x 128,
# 256 x 128 with the tail split for groups of >= 512 rows over long K) still the fastest? Step 6's 128-wide cap rests
# on NOTES 11 (H200), measured before the split-half 192- and 160-wide loops (NOTES 20, 32), the A-scale index per tile
# (NOTES 92) and the group walk (NOTES 88); NOTES 50 (H100) compared 256 x 128 with 128 x 128 only. DeepGEMM's masked
# kernel multicasts B (its #193: 10-20% faster on an H800).
# One device call (estimated at 6-7 minutes): no rebuild; the model's pick, then 128 x 128 / 160 / 192, 64 x 128,
# 256 x 128 and 128 x 192 / 128 x 128 in clusters of 2 (DG_TUNE_CLUSTER=2), one round each, one masked_m draw per row
# (moe_models.py's seed 7). A forced tile the kernel refuses prints "failed" and the rows go on.
# Predicted: none; wider 128-row tiles win where they cut a round (1 x 1024 x 7168 x 2048: 504 tiles of 128 x 128, 3.8
# waves, against 342 of 128 x 192, 2.6, at seed 7's 1100 rows), and lose on the decode rows (few rows: B's stream sets
# the pace).
#   bash benchmarks/experiments/masked_tile_oracle.sh
. "$(dirname "$0")/prelude.sh"
build
rows=(m1x1024n4096k7168 m1x1024n7168k2048 m2x512n4096k7168 m2x512n7168k2048 m4x256n4096k7168 m4x256n7168k2048
      dsv3_up_dec dsv3_down_dec qwen30_up_dec mixtral_up_dec gptoss_up_dec)
settings=("model:" "128x128:DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128" "128x160:DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=160"
          "128x192:DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192" "64x128:DG_TUNE_BLOCK_M=64 DG_TUNE_BLOCK_N=128"
          "256x128:DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128"
          "128x192c2:DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 DG_TUNE_CLUSTER=2"
          "128x128c2:DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=2")
for setting in "${settings[@]}"; do
  env ${setting#*:} timeout -k 5 100 python benchmarks/experiments/moe_models.py "${setting%%:*}" --masked \
    "${rows[@]}" 2>&1 | grep -vE "^(W|I)[0-9]{4}|absl" | tee -a "$OUT/rows.txt"
done
