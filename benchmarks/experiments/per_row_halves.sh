#!/usr/bin/env bash
# Half-width groups for the k-grouped two-wave loop (per_row_halves.patch, NOTES 46; measured, not taken): same-run
# A/B of the patched kernel headers against the committed ones sent along (carry .ab_old_cuda):
#   rm -rf .ab_old_cuda && git archive HEAD cuda | tar -x -C /tmp && mv /tmp/cuda .ab_old_cuda
#   git apply benchmarks/experiments/per_row_halves.patch && bash benchmarks/experiments/per_row_halves.sh [rounds]
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare .ab_old_cuda
ab_tests kgrouped tests/test_gpu_grouped.py -k k_grouped
for round in $(seq "${1:-1}"); do ab_grouped k_grouped; done 2>&1 | tee "$OUT/per_row_halves.txt"
echo "elapsed $((SECONDS - start)) s"
