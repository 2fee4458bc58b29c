#!/usr/bin/env bash
# Why ragged trails contiguous on the same tokens where groups are a few 128-row tiles (NOTES 90: Qwen3-235B up,
# 16 groups of ~512 rows, 209 us ragged against 193.5 contiguous, both in 128 x 192 tiles). Ragged never selects
# rows, but a group's last tile stores its partial warpgroup from registers (the TMA store would write the next
# group's rows), where contiguous tiles all take the TMA store. Two looks, one call (prepared in session 50, not run):
#  1. the same tiles (DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192) with the default epilogues and with register stores
#     everywhere (DG_TUNE_TMA_STORE=0), contiguous and ragged, two rounds: if the gap closes without the TMA store,
#     the partial tiles' stores are it;
#  2. DG_PROFILE_WAITS on 16 groups of 500 rows x 3072 x 4096, contiguous (padded to 512) and ragged: the consumers'
#     cycles per K block, their waits and their epilogue share (tools/waits_summary.py).
# Predicted: register stores everywhere slow contiguous by 2-4% (NOTES 60) and ragged by under 1%, closing most of
# the gap; the waits show ragged's epilogue share higher by the difference.
#   bash benchmarks/experiments/ragged_vs_contiguous.sh
. "$(dirname "$0")/prelude.sh"
build
export DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192
layers=(qwen235_up dsv3_up_4k r384n2048k4096=32,12288,2048,4096)
for round in 1 2; do
  for store in default 0; do
    env=(); [ $store = 0 ] && env=(DG_TUNE_TMA_STORE=0)
    env "${env[@]}" timeout -k 5 150 python benchmarks/experiments/moe_models.py "tma_$store$round" "${layers[@]}" \
      2>&1 | grep -vE "^(W|I)[0-9]{4}|absl" | tee -a "$OUT/stores.txt"
  done
done
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=10
for op in contiguous_padded ragged; do
  echo "## $op 16,500,3072,4096"
  timeout -k 5 90 python tools/profile_one.py $op 16,500,3072,4096 2>&1 | grep -vE "^(W|I)[0-9]{4}|absl"
done >"$OUT/waits.log"
python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
