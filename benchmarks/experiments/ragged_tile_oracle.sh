#!/usr/bin/env bash
# Every tile a ragged GEMM could take, forced, on ragged_half_tile.sh's layers: which one is fastest per layer and
# group draw, so that any model of a ragged group's last tile can be scored offline against the fastest (NOTES 94).
# Why: ragged_half_tile.patch (a half-empty last tile per group) won 3-10% on skewed draws and lost 4-10% on even
# ones (H200, 2026-11-29), and the model picks without seeing the group sizes. One device call (estimated at 6
# minutes): no rebuild; four forced tiles (256 x 128, 128 x 128 / 160 / 192; stages and cluster as the model says),
# two rounds, the settings alternating, both group draws each.
#   bash benchmarks/experiments/ragged_tile_oracle.sh
. "$(dirname "$0")/prelude.sh"
build
layers=(dsv3_up_4k dsv3_down_4k qwen30_up gptoss_up gptoss_down qwen235_up dsv3_down_16k
        r192n4096k7168=32,6144,4096,7168 r256n2048k4096=16,4096,2048,4096 r128n2048k4096=64,8192,2048,4096
        r192n2880k2880=128,24576,2880,2880)
tiles=("256 128" "128 128" "128 160" "128 192")
for round in 1 2; do
  for tile in "${tiles[@]}"; do
    read -r bm bn <<<"$tile"
    label="m${bm}n${bn}r$round"
    env DG_TUNE_BLOCK_M="$bm" DG_TUNE_BLOCK_N="$bn" timeout -k 5 120 python benchmarks/experiments/moe_models.py \
      "$label" --ragged-only "${layers[@]}" 2>&1 | grep -vE "^(W|I)[0-9]{4}|absl" | tee -a "$OUT/rows.txt"
  done
done
