#!/usr/bin/env bash
# k-grouped C loaded into the result registers at each tile's start (NOTES 85): the epilogue of a 256 x 128 tile with
# f32 C takes ~10k cycles, ~4.5k without C (NOTES 84); its C loads, though pulled into L2 ahead, wait out two L2 round
# trips with the tensor cores idle. Here the loads are issued before the tile's first wgmmas, into the registers the
# promotion adds into (the wgmma fragment layout), and the L2 prefetch moves to the tile's first K block
# (c_first.patch, applied to the device's copy unless the tree has it). Those headers against HEAD's, same run:
# the k-grouped GPU tests with the new ones, then the k-grouped rows (with C, then without C as a control:
# unchanged code) alternating over three rounds. One device call:
#   bash benchmarks/experiments/c_first.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_patch_vs_head benchmarks/experiments/c_first.patch
ab_tests kgrouped tests/test_gpu_grouped.py -k k_grouped
ab_tests kgrouped_configs tests/test_gpu_configs.py -k k_grouped
AB_ROUNDS=3 ab_grouped k_grouped | tee "$OUT/c_first_rows.txt"
AB_ROUNDS=1 ab_grouped k_grouped_no_c | tee "$OUT/c_first_no_c.txt"
echo "elapsed $((SECONDS - start)) s"
