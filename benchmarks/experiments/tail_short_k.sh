#!/usr/bin/env bash
# Does a tail-split kernel still pay ~0.5 us per tile (NOTES 27, which kept the split off below K = 4096) now that
# its exchange has no release fences (NOTES 49)? masked_draws.py's six draws per shape with the model's settings
# (first and last) and with DG_TUNE_TAIL_SPLIT=1 (K = 2048 rows: 128 x 128 tiles, now split where the last round
# allows; K = 7168 rows: unchanged, the control), then dense short-K rows the model / forced, two rounds.
# One device call, from the repo root: bash benchmarks/experiments/tail_short_k.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-tail-short
for setting in "" "DG_TUNE_TAIL_SPLIT=1" ""; do
  # shellcheck disable=SC2086  # the setting is words
  env $setting timeout -k 5 110 python benchmarks/experiments/masked_draws.py 6 2>&1 | grep -E " us |rror" |
    sed "s/^/${setting:-model} | /"
done | tee "$OUT/tail_short_k_masked.txt"
dense=(4096,7168,2048 4096,32768,512 4096,24576,1536)  # last rounds of 104 (no split), 4 and 36 tiles
for round in 1 2; do
  timeout -k 5 100 python benchmarks/experiments/dense_rows.py "${dense[@]}" 2>&1 | grep -E " us |rror" |
    sed "s/^/model r$round | /"
  DG_TUNE_TAIL_SPLIT=1 timeout -k 5 100 python benchmarks/experiments/dense_rows.py "${dense[@]}" 2>&1 |
    grep -E " us |rror" | sed "s/^/tail  r$round | /"
done | tee "$OUT/tail_short_k_dense.txt"
echo "elapsed $((SECONDS - start)) s"
