#!/usr/bin/env bash
# ptxas's --register-usage-level (DG_JIT_REGISTER_USAGE_LEVEL; DeepGEMM compiles with 10): how freely ptxas may
# use registers to schedule. Compiled locally (NVRTC 13.0): dense 256 x 128's SASS at N = 7168, K = 2048 does not
# change at 10 (that row is the control; at other N and K it does, NOTES 53), while 128 x 192 in a cluster, masked
# 128 x 128, contiguous 256 x 128 in a cluster, k-grouped 256 x 128 and 64 x 32 do (15-58% of their instructions
# differ). NOTES 51 found the hot loop's schedule worth 2-7%.
# Same run, the sides alternating (unset = ptxas's default, then 10), kernel time only; two rounds of the dense rows,
# one of the grouped rows (a second call repeats them if anything moved).
# One device call, from the repo root: bash benchmarks/experiments/register_usage_level.sh [grouped-only]
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-rul
dense=()
for m in 64 128 4096; do
  for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do dense+=("$m,$nk"); done
done
side() {  # level ("" = unset), script, its arguments
  local level=$1; shift
  DG_JIT_REGISTER_USAGE_LEVEL=$level timeout -k 5 200 python "benchmarks/experiments/$@" 2>&1 | grep -E " us |rror" |
    sed "s/^/level ${level:-dflt} | /"
}
if [ "${1:-}" != grouped-only ]; then
  for round in 1 2; do
    for level in "" 10; do side "$level" dense_rows.py "${dense[@]}" | sed "s/^/r$round /"; done
  done | tee "$OUT/rul_dense.txt"
fi
for level in "" 10; do side "$level" grouped_rows.py contiguous masked k_grouped; done | tee "$OUT/rul_grouped.txt"
echo "elapsed $((SECONDS - start)) s"
