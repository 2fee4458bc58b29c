#!/usr/bin/env bash
# The second wave's column scales from the first's registers (keep_col_scales.patch, NOTES 46: prepared in session 20,
# not yet run on a GPU): the GPU tests that take per-row B scales with the patched headers, then the k-grouped rows
# patched / committed, three rounds. One device call (carry .ab_old_cuda):
#   rm -rf .ab_old_cuda && git archive HEAD cuda | tar -x -C /tmp && mv /tmp/cuda .ab_old_cuda
#   git apply benchmarks/experiments/keep_col_scales.patch && bash benchmarks/experiments/keep_col_scales.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare .ab_old_cuda
ab_tests grouped tests/test_gpu_grouped.py -k k_grouped &
ab_tests configs tests/test_gpu_configs.py -k "k_grouped or per_row" &
wait
for round in 1 2 3; do ab_grouped k_grouped; done 2>&1 | tee "$OUT/keep_col_scales.txt"
echo "elapsed $((SECONDS - start)) s"
