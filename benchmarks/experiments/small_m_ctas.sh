#!/usr/bin/env bash
# Is small M's HBM stream of B set per SM or for the whole chip (benchmarks/NOTES.md 57)? 64 x 7168 x 16384 runs 112
# CTAs (64 x 64 tiles) at 2.26 TB/s, ~20 GB/s per CTA, while the copy ring alone (NOTES 23) streamed ~2.85 TB/s with
# 132. Same kernel, same K, B's width varied so that 64 x 64 tiles give 88 / 112 / 132 CTAs (N = 5632 / 7168 / 8448):
# if the rate is per SM, the time stays ~flat with N; if the chip's, it grows with N. Then the table's 112-CTA rows
# on 128 CTAs (64 / 128 x 112 tiles, K split over 2) against the model's pick.
#   bash benchmarks/experiments/small_m_ctas.sh      (one device call, ~3 min; logs under $OUT)
. "$(dirname "$0")/prelude.sh"
build
rows() { timeout -k 5 90 python benchmarks/experiments/dense_rows.py "$@" 2>&1 | grep -E "^ *[0-9]"; }
table=(64,7168,16384 64,7168,2048 128,7168,16384 128,7168,2048)
for round in 1 2; do
  echo "# round $round, 64 x 64 tiles (DG_TUNE_BLOCK_N=64 DG_TUNE_SPLIT_K=1): 88 / 112 / 132 CTAs"
  DG_TUNE_BLOCK_M=64 DG_TUNE_BLOCK_N=64 DG_TUNE_SPLIT_K=1 rows 64,5632,16384 64,7168,16384 64,8448,16384
  echo "# round $round, the model"
  rows "${table[@]}"
  echo "# round $round, DG_TUNE_BLOCK_N=112 DG_TUNE_SPLIT_K=2 (128 CTAs)"
  DG_TUNE_BLOCK_N=112 DG_TUNE_SPLIT_K=2 rows "${table[@]}"
done | tee "$OUT/small_m_ctas.txt"
