#!/usr/bin/env bash
# Session 66 (NOTES 109): the edges of the shifted bf16 rows (store_wave_bf16x8_shifted: a row's first t and last
# 8 - t columns of each tile, stored element by element) as at most three stores aligned to their width (8, 4, 2
# bytes) each (bf16_shifted_edges.patch, side edges) against the tree (side old).
# Prediction: the edge lanes' element stores are up to 15 store instructions per row pair and chunk quad at a tile's
# first and last quad, against one 16-byte store elsewhere; at most 6 with the patch. If store issue is part of what
# keeps 4096 x 7169 x 2048 at 126 us against 102 at N = 7168, edges takes it to ~118-122 (and 7170, 7172, 2113 x 7168
# alike); if the partial sectors at the tiles' edges are what costs, nothing moves.
# Ran in session 66 (NOTES 109): 7169 127.7 -> 119.7 us; taken in the C++ form (bf16_shifted_edges_memcheck.sh).
# From the repository root:  bash benchmarks/experiments/bf16_shifted_edges.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side edges benchmarks/experiments/bf16_shifted_edges.patch || exit 1
ab_side_tests edges "store_widths or shifted" 8 150 tests/test_gpu_configs.py
AB_SIDES="edges old" ab_dense 3 4096,7169,2048 4096,7170,2048 4096,7172,2048 4096,2113,7168 4096,50257,4096 \
  128,50257,4096 4096,7168,2048 | tee "$OUT/rows.txt"
ab_use edges
JDG_SANITIZE_FILES="tests/test_gpu_configs.py" JDG_SANITIZE_K="shifted or store_widths" \
  JDG_SANITIZE_LIMIT=150 bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -4
ab_use old; date -u >>"$OUT/machine.txt"
