#!/usr/bin/env bash
# Small M's bandwidth after a write flush (the table's, DeepGEMM's way) and after a read flush (benchmarks/NOTES.md
# 58): the same rows in one run, both ways.   bash benchmarks/experiments/flush_by.sh   (one device call, ~4 min)
. "$(dirname "$0")/prelude.sh"
build
shapes=()
for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do shapes+=(--shape "64,$nk"); done
for nk in 2112,7168 7168,16384 4096,7168; do shapes+=(--shape "128,$nk"); done
for by in write read; do
  timeout -k 5 150 python -m jax_deepgemm bench --only dense --iters 20 --flush-by "$by" "${shapes[@]}" \
    --output "$OUT/small_m_$by.json" 2>&1 | grep -v -E "^[IWE][0-9]{4} " | tee "$OUT/small_m_$by.log"
done
