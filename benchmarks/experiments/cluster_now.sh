#!/usr/bin/env bash
# Clusters of 2 (A multicast) with the two-wave loop of e91f39d: the dense M = 4096 rows and every grouped row of
# our kernels, DG_TUNE_CLUSTER=1 against 2, same run (ROUNDS="1 2": twice). 128-row tiles (masked, k-grouped, contiguous) are fed
# at ~2.8 cycles per 128-byte row per SM (NOTES 17); multicast halves A's rows. One device call; logs under $OUT.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
shapes=()
for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do shapes+=(--shape "4096,$nk"); done
for round in ${ROUNDS:-1}; do for cl in 1 2; do
  export DG_TUNE_CLUSTER=$cl DG_JIT_CACHE_DIR=/tmp/cn-cache-$cl
  timeout -k 5 100 python -m jax_deepgemm bench --only dense --iters 20 "${shapes[@]}" 2>&1 | grep -E "^ +[0-9]" |
    sed "s/^/dense cl=$cl r$round /"
  timeout -k 5 150 python benchmarks/experiments/grouped_rows.py 2>&1 | grep -E "^[a-z_0-9]+ +\[" |
    sed "s/^/cl=$cl r$round /"
done; done | tee "$OUT/cluster_now.txt"
