#!/usr/bin/env bash
# Since NOTES 32-33 the 160- and 192-wide loops choose their scale blocks at compile time: do 128 x 160 / 128 x 192
# tiles now beat the model's grouped picks (masked 128 x 128, contiguous 256 x 128)? The masked and contiguous rows
# of the grouped table (grouped_rows.py: our kernels only) under forced tiles, the model's choice first and last
# (the drift over the call). One device call, from the repo root: bash benchmarks/experiments/grouped_wide.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-wide
run() {  # kind, then the settings ("" = the model's)
  local kind=$1; shift
  for setting in "$@"; do
    # shellcheck disable=SC2086  # the setting is words
    env $setting DG_PRINT_CONFIGS=1 timeout -k 5 150 python benchmarks/experiments/grouped_rows.py "$kind" 2>&1 |
      grep -E " us |rror|jax_deepgemm: m_grouped" | sed "s/^/${setting:-model} | /"
  done
}
run masked "" "DG_TUNE_BLOCK_N=160" "DG_TUNE_BLOCK_N=192" "DG_TUNE_BLOCK_N=192 DG_TUNE_CLUSTER=2" "" |
  tee "$OUT/masked_wide.txt"
run contiguous "" "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192" "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=160" \
  "DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 DG_TUNE_CLUSTER=2" "" | tee "$OUT/contiguous_wide.txt"
