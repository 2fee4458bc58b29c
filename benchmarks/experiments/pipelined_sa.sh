#!/usr/bin/env bash
# A scales read when a pipelined K block is issued (NOTES 45): same-run A/B of the working tree's kernel headers
# against the committed ones sent along, on the rows that take the accumulator pipeline (dense M = 64 / 128, masked),
# new / old alternating, two rounds; then the dense and grouped GPU test files. One device call (carry .ab_old_cuda):
#   rm -rf .ab_old_cuda && git archive HEAD cuda | tar -x -C /tmp && mv /tmp/cuda .ab_old_cuda
#   bash benchmarks/experiments/pipelined_sa.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare .ab_old_cuda
small=()
for m in 64 128; do for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do small+=("$m,$nk"); done; done
{
  ab_dense 2 "${small[@]}" 256,7168,2048
  ab_grouped masked
  ab_grouped masked
} 2>&1 | tee "$OUT/pipelined_sa.txt"
ab_use new
ab_tests dense tests/test_gpu_dense.py &
ab_tests grouped tests/test_gpu_grouped.py &
wait
echo "elapsed $((SECONDS - start)) s"
