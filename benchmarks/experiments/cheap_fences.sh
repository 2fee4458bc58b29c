#!/usr/bin/env bash
# Cluster barriers and partial-tile exchanges without release fences (NOTES 49): the working tree's headers against
# those in .ab_old_cuda (the kernel before), same call: the split-K rows, two clustered M = 4096 rows and the masked
# rows (tail split), alternating; then the GPU tests of the exchanges and the dense and grouped files with the new
# headers. One device call (carry .ab_old_cuda), e.g. against 4a9cd03:
#   rm -rf .ab_old_cuda && git archive 4a9cd03 cuda | tar -x -C /tmp && mv /tmp/cuda .ab_old_cuda
#   bash benchmarks/experiments/cheap_fences.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare .ab_old_cuda
ab_dense 3 64,2112,7168 128,2112,7168 4096,2112,7168 4096,7168,16384 2>&1 | tee "$OUT/fences_dense.txt"
ab_grouped masked 2>&1 | tee "$OUT/fences_masked.txt"
echo "A/B done at $((SECONDS - start)) s"
export DG_JIT_CACHE_DIR=/tmp/fences_tests
ab_tests exchanges tests/test_gpu_configs.py -k "split_k or tail_split" &
ab_tests dense tests/test_gpu_dense.py &
ab_tests grouped tests/test_gpu_grouped.py &
wait
echo "elapsed $((SECONDS - start)) s"
