#!/usr/bin/env bash
# Session 63 (run, NOTES 106: 0.1-0.4% slower than the tree at N = 2048, even elsewhere; not taken). The k-grouped
# f32 line stores with the partner quad four over (lane ^ 16: a store's four rows consecutive) for every N,
# kgrouped_f32_lines16.patch, against the tree (lane ^ 4: rows 2 apart; N = 2048 keeps 8 rows x 64 bytes, where
# lane ^ 4 lost 4-5%). Rows with C, two rounds; then the k-grouped GPU tests with
# the patch. Prediction, if what lost is a store's four rows 16 KB apart (lane ^ 4 at N = 2048): lane ^ 16 gains ~1%
# at N = 2048 over the tree (rows 8 KB apart, as lane ^ 4's at N = 1024, which gained 1.5%) and loses ~4% at
# N = 4096 (rows 16 KB apart), the same at N = 1024 and 7168. If N = 2048 itself is what loses, lane ^ 16 loses there
# too. From the repository root: bash benchmarks/experiments/kgrouped_f32_lines16.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_patch_vs_head benchmarks/experiments/kgrouped_f32_lines16.patch
AB_ROUNDS=2 ab_grouped k_grouped=4,4096,1024,8192 k_grouped=4,4096,2048,8192 k_grouped=4,4096,4096,8192 \
  k_grouped=4,4096,7168,8192 k_grouped=4,7168,2048,8192 k_grouped=8,4096,2048,4096 | tee "$OUT/lines16_rows.txt"
echo "rows done $((SECONDS - start)) s"
ab_kgrouped_tests kg16 $((540 - (SECONDS - start))); echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
