#!/usr/bin/env bash
# Ours beside DeepGEMM's own kernels in one device call (NOTES 78): the grouped table's contiguous and masked rows
# (grouped_rows.py, the table's seed-0 draws) against .dgprobe/dg_grouped_bench on the same draws, and three dense
# M = 4096 rows against .dgprobe/dg_bench; two rounds, ours and DeepGEMM's alternating. The .dgprobe launchers are
# git-ignored (built from DeepGEMM's public source for measurement only): carry them. From the repo root:
#   bash benchmarks/experiments/dg_same_call.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-dg-same-call
dense=(4096,7168,16384 4096,4096,7168 4096,7168,2048)  # the shapes dg_bench times
for round in 1 2; do
  timeout -k 5 150 python benchmarks/experiments/grouped_rows.py contiguous masked 2>&1 | grep -E " us |rror" |
    sed "s/^/ours r$round | /"
  timeout -k 5 120 ./.dgprobe/dg_grouped_bench 2>&1 | grep -v "^#" | sed "s/^/dg r$round | /"
  timeout -k 5 90 python benchmarks/experiments/dense_rows.py "${dense[@]}" 2>&1 | grep -E " us|rror" |
    sed "s/^/ours r$round | /"
  timeout -k 5 90 ./.dgprobe/dg_bench 2>&1 | grep -v "^#" | sed "s/^/dg r$round | /"
done | tee "$OUT/dg_same_call.txt"
echo "elapsed $((SECONDS - start)) s"
