#!/usr/bin/env bash
# The second wave's column scales from the first's registers (NOTES 46-47; run in session 21 as a patch on a90d215,
# folded in since): the GPU tests that take per-row B scales with the working tree's headers, then the k-grouped rows
# against the headers in .ab_old_cuda, three rounds. One device call (carry .ab_old_cuda), e.g. against a90d215:
#   rm -rf .ab_old_cuda && git archive a90d215 cuda | tar -x -C /tmp && mv /tmp/cuda .ab_old_cuda
#   bash benchmarks/experiments/keep_col_scales.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare .ab_old_cuda
ab_tests grouped tests/test_gpu_grouped.py -k k_grouped &
ab_tests configs tests/test_gpu_configs.py -k "k_grouped or per_row" &
wait
for round in 1 2 3; do ab_grouped k_grouped; done 2>&1 | tee "$OUT/keep_col_scales.txt"
echo "elapsed $((SECONDS - start)) s"
