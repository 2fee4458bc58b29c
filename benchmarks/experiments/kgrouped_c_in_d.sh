#!/usr/bin/env bash
# k-grouped C added into D in place (NOTES 84; kgrouped_c_in_d.patch, rebased onto the tree of NOTES 103; measured in
# NOTES 85, not taken). The
# k-grouped epilogue takes ~10k cycles per
# 256 x 128 tile with f32 C (~7.5% of the goal rows' time), ~4.5k without C: the C loads and the register stores of
# the FP32 tile. The patch: JDG_EXP_C_IN_D=1 aliases the result to C (c_kind 3) and the kernel stages each 64-row
# wave in shared memory (one stage fewer) and adds it into D with a TMA reduction (cp.reduce.async.bulk.tensor .add,
# through a [G, M, N] map that clips each group's rows); DG_TUNE_TMA_STORE=1 stores without C the same way. One device
# call, from the repo root:
#   bash benchmarks/experiments/kgrouped_c_in_d.sh
# Applies the patch to the device's copy unless the tree has it, runs its GPU tests (every k-grouped case in 256-row
# tiles alone and in clusters, C as a jit argument and donated, hostile sizes), then the k-grouped rows without /
# with it, three rounds alternating (kernel us: our kernel alone, the time an in-place caller sees; jit: the program,
# XLA's copy of C included, since the benchmark's C is not donated), then the rows without C, register stores / TMA.
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_patched benchmarks/experiments/kgrouped_c_in_d.patch
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-c-in-d
timeout -k 5 240 python -I -m pytest tests/test_gpu_configs.py -q -rs -p no:cacheprovider -k "c_in_d" \
  >"$OUT/tests_c_in_d.log" 2>&1
grep -E "^FAILED|^ERROR|passed|failed" "$OUT/tests_c_in_d.log" | tail -6
for round in 1 2 3; do for v in 0 1; do
  JDG_EXP_C_IN_D=$v timeout -k 5 100 python benchmarks/experiments/grouped_rows.py k_grouped 2>&1 |
    grep -E " us |rror" | sed "s/^/c_in_d=$v r$round /"
done; done | tee "$OUT/kgrouped_c_in_d.txt"
for round in 1 2; do for t in 0 1; do
  DG_TUNE_TMA_STORE=$t timeout -k 5 100 python benchmarks/experiments/grouped_rows.py k_grouped_no_c 2>&1 |
    grep -E " us |rror" | sed "s/^/no_c tma_store=$t r$round /"
done; done | tee "$OUT/kgrouped_no_c_tma.txt"
echo "elapsed $((SECONDS - start)) s"
