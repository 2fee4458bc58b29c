#!/usr/bin/env bash
# Ours beside DeepGEMM's own dense kernel in one device call: all 18 shapes of the dense table (M 64 / 128 / 4096)
# with dense_rows.py against .dgprobe/dg_dense_bench, which runs each shape with DeepGEMM's heuristic pick (as its
# code has it, "fork", and with block N 144/160/192 allowed, "fixed"; one "fork=fixed" row where they agree) plus a
# few alternative tiles ("alt") for 4096x2112x7168 and 128x4096x7168; two rounds, ours and DeepGEMM's alternating.
# The .dgprobe launcher is git-ignored (built from DeepGEMM's public source for measurement only): carry it. From the
# repo root:
#   bash benchmarks/experiments/dg_dense_same_call.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-dg-dense-same-call
chmod +x .dgprobe/dg_dense_bench  # the device copy may drop modes
dense=()
for m in 64 128 4096; do
  for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do dense+=("$m,$nk"); done
done
for round in 1 2; do
  timeout -k 5 120 python benchmarks/experiments/dense_rows.py "${dense[@]}" 2>&1 | grep -E " us|rror" |
    sed "s/^/ours r$round | /"
  timeout -k 5 75 ./.dgprobe/dg_dense_bench 2>&1 | tee "$OUT/dg_r$round.log" | grep -v "^#" |
    sed "s/^/dg r$round | /"
done | tee "$OUT/dg_dense_same_call.txt"
echo "elapsed $((SECONDS - start)) s"
