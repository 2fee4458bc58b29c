#!/usr/bin/env bash
# Masked GEMMs in 256 x 128 tiles with the tail split (never measured: NOTES 18 forced 256 x 128 on masked rows
# before the tail split existed, -1% to -17% then): masked_draws.py's six draws per shape under the model's 128 x 128
# (first and last), forced 256 x 128 (the tail split on, as for every masked kernel from K = 4096) and forced
# 256 x 128 without it. One device call, from the repo root: bash benchmarks/experiments/masked_tall.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-tall
for setting in "" "DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128" "DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 DG_TUNE_TAIL_SPLIT=0" ""; do
  # shellcheck disable=SC2086  # the setting is words
  env $setting timeout -k 5 110 python benchmarks/experiments/masked_draws.py 6 2>&1 | grep -E " us |rror" |
    sed "s/^/${setting:-model} | /"
done | tee "$OUT/masked_tall.txt"
echo "elapsed $((SECONDS - start)) s"
