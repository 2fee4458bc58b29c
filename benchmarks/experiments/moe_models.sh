#!/usr/bin/env bash
# moe_models.py on the GPU: the heuristics' picks against forced 128- and 256-row tiles on published models' MoE
# layers, one process per setting, the default first and last (drift). Logs under $OUT.
#   bash benchmarks/experiments/moe_models.sh [default bm128 bm256 ...]   (default: all four runs)
. "$(dirname "$0")/prelude.sh"
build
runs=("$@"); [ ${#runs[@]} -gt 0 ] || runs=(default bm128 bm256 default2)
for run in "${runs[@]}"; do
  case $run in
    default) env=(); args=(--baseline --masked) ;;
    default2) env=(); args=(--masked) ;;
    bm128) env=(DG_TUNE_BLOCK_M=128); args=(--masked) ;;
    bm256) env=(DG_TUNE_BLOCK_M=256); args=() ;;
    *) echo "unknown run $run"; exit 2 ;;
  esac
  env "${env[@]}" timeout -k 5 280 python benchmarks/experiments/moe_models.py "$run" "${args[@]}" 2>&1 |
    grep -vE "^(W|I)[0-9]{4}|absl" | tee -a "$OUT/moe_models.txt"
done
