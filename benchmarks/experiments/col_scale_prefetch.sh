#!/usr/bin/env bash
# Per-row B scales read ahead (NOTES 44): same-run A/B of the working tree's kernel headers against the committed
# ones sent along, on the k-grouped rows (new / old three times), then the GPU tests that take per-row B scales
# (k-grouped, ragged and dense per-row, every forced configuration of them). One device call (carry .ab_old_cuda):
#   rm -rf .ab_old_cuda && git archive HEAD cuda | tar -x -C /tmp && mv /tmp/cuda .ab_old_cuda
#   bash benchmarks/experiments/col_scale_prefetch.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare .ab_old_cuda
{
  ab_grouped k_grouped
  ab_grouped k_grouped
  ab_grouped k_grouped
} 2>&1 | tee "$OUT/col_scale_prefetch.txt"
ab_use new
ab_tests grouped tests/test_gpu_grouped.py &
ab_tests configs tests/test_gpu_configs.py -k "k_grouped or per_row" &
ab_tests dense tests/test_gpu_dense.py -k "per_row or f32 or profile" &
wait
echo "elapsed $((SECONDS - start)) s"
