#!/usr/bin/env bash
# Clusters of 2 (A multicast) at small M, again with the two-wave loop of e91f39d (NOTES 12 measured it on the H200
# with older kernels): dense M = 64 / 128 rows, DG_TUNE_CLUSTER=1 / 2, two rounds; then forced 128 x 96 (with and
# without a cluster) and 256 x 64 tiles on N = 2112. One device call; logs under $OUT (NOTES 17).
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
shapes=()
for m in 64 128; do for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do shapes+=(--shape "$m,$nk"); done; done
for round in 1 2; do for cl in 1 2; do
  DG_TUNE_CLUSTER=$cl timeout -k 5 100 python -m jax_deepgemm bench --only dense --iters 30 --output "$OUT/small_cl${cl}_r$round.json" "${shapes[@]}" 2>&1 | grep -E "^ +[0-9]" | sed "s/^/cl=$cl r$round /"
done; done | tee "$OUT/small_clusters.txt"
for cfg in "128 96 2" "128 96 1" "256 64 1"; do set -- $cfg
  DG_TUNE_BLOCK_M=$1 DG_TUNE_BLOCK_N=$2 DG_TUNE_CLUSTER=$3 timeout -k 5 60 python -m jax_deepgemm bench --only dense --iters 30 --shape 4096,2112,7168 --shape 2048,2112,7168 2>&1 | grep -E "^ +[0-9]" | sed "s/^/$1x$2 cl=$3 /"
done | tee "$OUT/n2112.txt"
