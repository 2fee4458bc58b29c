#!/usr/bin/env bash
# Contiguous and ragged rows whose groups take 128-row tiles (no cluster by default) over K that is not a multiple
# of 128, in clusters of 2 (DG_TUNE_CLUSTER=2) against none (=1), with an aligned control (NOTES 75 found dense and
# masked rows 5-36% faster in clusters there). Kernel time. One device call, from the repo root:
#   [UKG_ROUNDS=2] bash benchmarks/experiments/unaligned_k_grouped.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/ukg_cache
for round in $(seq "${UKG_ROUNDS:-1}"); do for c in 1 2; do
  export DG_TUNE_CLUSTER=$c
  timeout -k 5 100 python benchmarks/experiments/grouped_rows.py contiguous=16,256,4096,6000 \
    contiguous=32,128,4096,2000 contiguous=16,256,4096,7168 2>&1 | grep -E " us |rror" |
    sed "s@^@cluster=$c r$round @"
done; done | tee "$OUT/ab.txt"
echo "elapsed $((SECONDS - start)) s"
