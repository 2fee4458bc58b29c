#!/usr/bin/env bash
# Small-M dense variants (M = 64 / 128, the six N, K of the table), same run: HEAD's picks, 64-row tiles at M = 128
# (DeepGEMM's choice there), and b_first.patch (the producer issues B's copy before A's). One device call.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
x=benchmarks/experiments
bench() {  # label, then shapes
  local label=$1; shift
  DG_JIT_CACHE_DIR=/tmp/smv-$label timeout -k 5 100 python -m jax_deepgemm bench --only dense --iters 30 "$@" 2>&1 |
    grep -E "^ +[0-9]" | sed "s/^/$label /"
}
s64=(); s128=()
for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do s64+=(--shape "64,$nk"); s128+=(--shape "128,$nk"); done
{
  bench head "${s64[@]}" "${s128[@]}"
  DG_TUNE_BLOCK_M=64 bench bm64 "${s128[@]}"
  git apply $x/b_first.patch && bench b_first "${s64[@]}" "${s128[@]}"
  git checkout -q -- cuda
  bench head2 "${s64[@]}" "${s128[@]}"
} | tee "$OUT/small_m_variants.txt"
