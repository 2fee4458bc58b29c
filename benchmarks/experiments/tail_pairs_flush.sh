#!/usr/bin/env bash
# Prepared, not run (NOTES 127's next probe): tail pairs (tail_pairs.patch) ran 3.5-4.8% slower than HEAD in timed
# calls after bench's write flush (NOTES 126) but level in Nsight Compute's single launches, with level L2 and DRAM
# counts (NOTES 127). Does the flush tell them apart? ragged_tail_cost.py at N, K = 4096, 7168, HEAD's package ("old")
# and HEAD with the patch ("new"), after the write flush and after the read flush (FLUSH_BY=read: no dirty lines for
# the timed kernel to write back). One device call, ~3 minutes.
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
sent_tree /tmp/tree_old
git apply benchmarks/experiments/tail_pairs.patch || { echo "tail_pairs.patch does not apply"; exit 1; }
ab_install new . old /tmp/tree_old
for flush in write read; do
  for s in old new; do
    FLUSH_BY=$flush side $s timeout -k 5 150 python $R/benchmarks/experiments/ragged_tail_cost.py 4096,7168 2>&1 |
      grep -E "^round" | sed "s/^/$s $flush /" | tee -a "$OUT/tail_cost.txt"
  done
done
git checkout -- cuda ffi tests
date -u
