#!/usr/bin/env bash
# masked_draws.py (six masked_m draws per shape) under the model's 128 x 128 and forced 128 x 192 / 160 tiles, the
# model first and last. One device call, from the repo root: bash benchmarks/experiments/masked_draws.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-draws
for setting in "" "DG_TUNE_BLOCK_N=192" "DG_TUNE_BLOCK_N=192 DG_TUNE_CLUSTER=2" "DG_TUNE_BLOCK_N=160" ""; do
  # shellcheck disable=SC2086  # the setting is words
  env $setting timeout -k 5 110 python benchmarks/experiments/masked_draws.py 6 2>&1 | grep -E " us |rror" |
    sed "s/^/${setting:-model} | /"
done | tee "$OUT/masked_draws.txt"
