#!/usr/bin/env bash
# Forced tile configurations against the heuristic's, dense M = 4096 rows, in one run (kernel us; the bench's
# baselines come along). Also: does DG_PROFILE_WAITS (clock64 around every barrier wait) change the kernel's own
# time? (NOTES 16). Run from the repo root on the GPU machine after the build; logs under $OUT.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
export DG_PRINT_CONFIGS=1
all=()
for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do all+=(--shape "4096,$nk"); done
case_() {  # label, env assignments ("-" for none), shape args...
  local label=$1 envs=$2
  shift 2
  [ "$envs" = - ] && envs=""
  env $envs DG_JIT_CACHE_DIR="/tmp/cfg-cache-$label" timeout -k 5 150 python -m jax_deepgemm bench --only dense \
    --iters 20 --output "$OUT/cfg_$label.json" "$@" 2>&1 | grep -E "^ +[0-9]|-> block_m" | sed "s/^/$label /"
}
{
  case_ default - "${all[@]}"
  case_ profile_waits DG_PROFILE_WAITS=1 --shape 4096,7168,16384 --shape 4096,2112,7168
  case_ bm128_bn192 "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192" "${all[@]}"
  case_ cluster2 DG_TUNE_CLUSTER=2 "${all[@]}"
  case_ bm256_bn128 "DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128" --shape 4096,2112,7168
  case_ tma_store0 DG_TUNE_TMA_STORE=0 --shape 4096,7168,16384 --shape 4096,4096,7168 --shape 4096,2112,7168
  case_ default_again - "${all[@]}"
} | tee "$OUT/configs.txt"
