#!/usr/bin/env bash
# Session 66 (NOTES 109): compute-sanitizer memcheck crashed (segfault, host side, no report) on the first case of
# bf16_shifted_edges.sh's memcheck (store_widths bf16 128 1540) with side edges (bf16_shifted_edges.patch: the edge
# stores as inline-PTX st.global.v2 / .b32 / .b16), where the tree's kernels ran 24 such cases clean. Side cxx
# (bf16_shifted_edges_cxx.patch) stores the same edges in C++ (uint2, 32-bit and element stores), no inline PTX but
# the tree's 16-byte one. Memcheck of that one case per side, cxx's tests and rows against edges and old, then
# memcheck of cxx's 24 store cases. If cxx runs clean and edges crashes again, the crash is the sanitizer on the
# narrower PTX stores; cxx rows at edges' speed make it the form to take.
# Ran in session 66 (NOTES 109): both forms ran the case clean, cxx at edges' speed: cxx taken (e60fa6c).
# From the repository root:  bash benchmarks/experiments/bf16_shifted_edges_memcheck.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side edges benchmarks/experiments/bf16_shifted_edges.patch || exit 1
ab_side cxx benchmarks/experiments/bf16_shifted_edges_cxx.patch || exit 1
one="store_widths and bfloat16 and 128 and 1540"
for side in edges cxx; do
  ab_use $side; echo "memcheck, side $side, one case:"
  JDG_SANITIZE_FILES="tests/test_gpu_configs.py" JDG_SANITIZE_K="$one" JDG_SANITIZE_LIMIT=60 \
    bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -3
  mv "$OUT/memcheck.log" "$OUT/memcheck_one_$side.log"
done
ab_side_tests cxx "store_widths or shifted" 8 100 tests/test_gpu_configs.py
AB_SIDES="cxx edges old" ab_dense 2 4096,7169,2048 4096,7170,2048 4096,7172,2048 | tee "$OUT/rows.txt"
ab_use cxx
JDG_SANITIZE_FILES="tests/test_gpu_configs.py" JDG_SANITIZE_K="shifted or store_widths" \
  JDG_SANITIZE_LIMIT=$((380 - (SECONDS - start))) bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -4
ab_use old; date -u >>"$OUT/machine.txt"
