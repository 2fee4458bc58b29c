#!/usr/bin/env bash
# The per-row promotion (k-grouped, dense with per-row B scales) as out += (acc * b_scale) * a_scale, row by row
# (per_row_order.patch), against the headers as sent, out += (a_scale * b_scale) * acc (NOTES 133). The sent form is
# an FMUL of the two scales and an FFMA reading three vector registers (product, accumulator, result), none of them
# kept in the operand reuse cache; the patched one multiplies the accumulator by the column scale (FMUL) and adds it
# times the row scale, which ptxas puts in operand A and marks for reuse on some of a row's FFMAs.
# Two rounds of the MoE step's k-grouped shapes (bf16 out) and the table's k-grouped rows (f32 with C), then the GPU
# tests of the per-row paths with the patch.
. benchmarks/experiments/ab_headers.sh
ab_patch_vs_head benchmarks/experiments/per_row_order.patch
AB_ROUNDS=2 ab_grouped k_grouped_bf16=16,4096,7168,1024 k_grouped_bf16=16,7168,2048,1024 k_grouped |
  tee "$OUT/rows.txt"
ab_use new
ab_tests grouped tests/test_gpu_grouped.py -k k_grouped &
ab_tests configs tests/test_gpu_configs.py -k "k_grouped or per_row" &
ab_tests dense tests/test_gpu_dense.py -k "per_row or options" &
ab_tests differentiable tests/test_differentiable.py &
wait
echo "elapsed $((SECONDS - start)) s"
