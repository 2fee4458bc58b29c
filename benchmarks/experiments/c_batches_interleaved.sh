#!/usr/bin/env bash
# The register epilogue with C, each batch's stores after the next batch's C loads (NOTES 85): add_c loaded both
# 64-row waves' C (two batches of 16 float4 loads per thread, the second after the first's adds) before any store, so
# the stores waited out the second batch's L2 round trip; add_c_and_store issues batch b + 1's loads, then batch
# b's stores (c_batches_interleaved.patch, applied to the device's copy unless the tree has it). Those headers
# against HEAD's, same run: the GPU tests that take C with the new ones, then the k-grouped rows alternating over
# three rounds. One device call, from the repo root:  bash benchmarks/experiments/c_batches_interleaved.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_patch_vs_head benchmarks/experiments/c_batches_interleaved.patch
ab_tests c_tests tests/test_gpu_grouped.py tests/test_gpu_dense.py tests/test_gpu_configs.py \
  -k "k_grouped or with_c or c_prefetch or test_gpu_dense"
AB_ROUNDS=3 ab_grouped k_grouped | tee "$OUT/c_batches_rows.txt"
echo "elapsed $((SECONDS - start)) s"
