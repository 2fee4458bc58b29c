#!/usr/bin/env bash
# Tail pairs without clusters (DG_TUNE_CLUSTER=1 on both sides): ragged_tail_cost.py at N, K = 4096, 7168, the sent
# tree (tail_pairs.patch applied) against 9b2f39c (.abtrees/9b2f39c, carried).
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
ab_install new . old .abtrees/9b2f39c
export DG_TUNE_CLUSTER=1
for s in old new; do
  side $s timeout -k 5 100 python $R/benchmarks/experiments/ragged_tail_cost.py 4096,7168 2>&1 |
    grep -E "^round" | sed "s/^/$s /" | tee -a "$OUT/tail_cost.txt"
done
