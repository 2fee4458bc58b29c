#!/usr/bin/env bash
# DeepGEMM's masked tiles on ours (NOTES 77): its heuristics give the table's masked rows 256-row tiles of 80, 96 or
# 112 columns (fewer rounds; tiles that straddle 128-column scale blocks), ours 128 x 128 or 256 x 128. masked_draws.py
# (four masked_m draws per shape) under the model and forced 256 x 80 / 96 / 112, the model first and last; then,
# where .dgprobe/dg_grouped_bench was carried (git-ignored; DeepGEMM's own grouped kernels on the table's draws,
# built for measurement only), DeepGEMM on the same GPU. One device call, from the repo root (carry .dgprobe):
#   bash benchmarks/experiments/masked_dg_tiles.sh
# Other settings instead (each one argument; "" for the model), and the number of draws in JDG_DRAWS (default 4):
#   JDG_DRAWS=2 bash benchmarks/experiments/masked_dg_tiles.sh "" "DG_TUNE_BLOCK_N=80 DG_TUNE_CLUSTER=2"
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-dg-tiles
[ $# -gt 0 ] || set -- "" "DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=96" "DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=112" \
                      "DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=80" ""
for setting in "$@"; do
  # shellcheck disable=SC2086  # the setting is words
  env $setting timeout -k 5 100 python benchmarks/experiments/masked_draws.py "${JDG_DRAWS:-4}" 2>&1 |
    grep -E " us |rror" |
    sed "s/^/${setting:-model} | /"
done | tee "$OUT/masked_dg_tiles.txt"
if [ -x .dgprobe/dg_grouped_bench ]; then
  timeout -k 5 120 ./.dgprobe/dg_grouped_bench 2>&1 | tee "$OUT/dg_grouped.txt" | grep -v "^#"
fi
echo "elapsed $((SECONDS - start)) s"
