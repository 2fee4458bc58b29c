#!/usr/bin/env bash
# k-grouped C added into D in place with f32 reductions (NOTES 85). The TMA-reduction form (kgrouped_c_in_d.patch,
# NOTES 84/85) cost a stage and serialized its staging; here the register epilogue stays, with 4 stages and C pulled
# into L2 ahead, but instead of loading C, adding and storing, each thread adds its values into D (aliased to C) with
# red.global.add.v4.f32, which the consumers do not wait for (kgrouped_c_red.patch, applied to the device's copy
# unless the tree has it). One device call, from the repo root:
#   bash benchmarks/experiments/kgrouped_c_red.sh
# Its GPU tests (k-grouped cases in 128-row tiles and 256-row tiles alone and in clusters, C a jit argument and
# donated, hostile sizes) and the default k-grouped tests, then the k-grouped rows without / with it, three rounds
# alternating (kernel us: our kernel alone; jit: the program, with XLA's copy of the benchmark's C, not donated).
# Measured in NOTES 85, not taken; its scan test fails there (the handler saw C and D at two addresses).
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_patched benchmarks/experiments/kgrouped_c_red.patch
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-c-red
timeout -k 5 200 python -I -m pytest tests/test_gpu_configs.py -q -rs -p no:cacheprovider -k c_in_d \
  >"$OUT/tests_c_red.log" 2>&1
timeout -k 5 120 python -I -m pytest tests/test_gpu_grouped.py -q -rs -p no:cacheprovider -k k_grouped \
  >"$OUT/tests_k_grouped.log" 2>&1
grep -E "^FAILED|^ERROR|passed|failed" "$OUT/tests_k_grouped.log" | tail -4
grep -E "^FAILED|^ERROR|passed|failed" "$OUT/tests_c_red.log" | tail -6
for round in 1 2 3; do for v in 0 1; do
  JDG_EXP_C_IN_D=$v timeout -k 5 100 python benchmarks/experiments/grouped_rows.py k_grouped 2>&1 |
    grep -E " us |rror" | sed "s/^/c_red=$v r$round /"
done; done | tee "$OUT/kgrouped_c_red.txt"
echo "elapsed $((SECONDS - start)) s"
