#!/usr/bin/env bash
# 02_'s partial A boxes left the ragged rows alone: their kernels run in clusters of 2, which the patch excludes. Here
# both packages (03c3422 / 03c3422 + benchmarks/experiments/partial_a_waves.patch) with clusters off
# (DG_TUNE_CLUSTER=1), ragged_tail_cost.py's two rounds each: does loading only a tail tile's waves shorten it?
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
source tools/ab_side.sh
ab_install new . old .abtrees/03c3422
for s in old new; do
  DG_TUNE_CLUSTER=1 side $s timeout -k 5 120 python $R/benchmarks/experiments/ragged_tail_cost.py 2>&1 |
    grep "^round" | sed "s/^/$s cluster1 /" | tee -a "$OUT/tail_cost.txt"
done
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
