#!/usr/bin/env bash
# The fused SwiGLU backward kernel with 1 (.abtrees/s1: HEAD), 2 (the sent tree) or 4 (.abtrees/s4) chunks loaded
# ahead per lane: swiglu_backward.py's fused form at M 16384, F 2048 and M 8192, F 1024, two rounds.
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
ab_install s1 .abtrees/s1 s2 . s4 .abtrees/s4
for round in 1 2; do
  for s in s1 s2 s4; do
    for shape in "16384 2048" "8192 1024"; do
      side $s timeout -k 5 100 python $R/benchmarks/experiments/swiglu_backward.py $shape fused 2>&1 |
        grep -E "^fused" | sed "s/^/$s r$round $shape /" | tee -a "$OUT/steps.txt"
    done
  done
done
date -u
