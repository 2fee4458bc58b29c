#!/usr/bin/env bash
# Ragged and masked tiles that own fewer rows than BLOCK_M load only the 64-row waves holding them (new) against
# 03c3422 (the whole A box): ragged_tail_cost.py, the grouped table's masked, contiguous and ragged rows
# (grouped_rows.py, no baselines) and the MoE training step's kernels, old / new, two rounds each.
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
source tools/ab_side.sh
ab_install new . old .abtrees/03c3422
for round in 1 2; do
  for s in old new; do
    side $s timeout -k 5 100 python $R/benchmarks/experiments/ragged_tail_cost.py 2>&1 | grep "^round 0" |
      sed "s/^round 0/$s r$round/" | tee -a "$OUT/tail_cost.txt"
  done
done
for round in 1 2; do
  for s in old new; do
    side $s timeout -k 5 100 python $R/benchmarks/experiments/grouped_rows.py masked contiguous 2>&1 |
      grep -v -i warning | sed "s/^/$s r$round /" >> "$OUT/grouped_rows.txt"
  done
done
grep -E "masked|ragged" "$OUT/grouped_rows.txt" | head -40
for round in 1 2; do
  for s in old new; do
    side $s timeout -k 5 150 python $R/benchmarks/experiments/step_kernels.py moe_x_bf16 2>&1 | grep -v -i warning |
      grep -E "us of kernels|jdg_" | sed "s/^/$s r$round /" >> "$OUT/steps.txt"
  done
done
grep -E "us of kernels|jdg_fp8_gemm" "$OUT/steps.txt"
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
