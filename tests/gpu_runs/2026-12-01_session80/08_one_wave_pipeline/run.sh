#!/usr/bin/env bash
# Ragged and masked two-wave tiles: a warpgroup with only its first wave to compute runs its K blocks with two
# accumulators (new, the working tree: out[1]'s registers as the second) against 97ab020 (old, one accumulator):
# ragged_tail_cost.py and the masked table rows (grouped_rows.py), old / new. No GPU tests in this call (no device
# time left for them).
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
source tools/ab_side.sh
ab_install new . old .abtrees/97ab020
for s in old new; do
  side $s timeout -k 5 80 python $R/benchmarks/experiments/ragged_tail_cost.py 2>&1 | grep "^round" |
    sed "s/^/$s /" | tee -a "$OUT/tail_cost.txt"
done
for s in old new; do
  side $s timeout -k 5 50 python $R/benchmarks/experiments/grouped_rows.py masked 2>&1 | grep -v -i warning |
    sed "s/^/$s /" | tee -a "$OUT/grouped_rows.txt"
done
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
