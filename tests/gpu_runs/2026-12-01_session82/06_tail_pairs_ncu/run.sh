#!/usr/bin/env bash
# Prepared, not run (NOTES 126's next probe): why tail pairs (experiments/tail_pairs.patch) made the ragged kernel
# slower at N, K = 4096, 7168 although its tail tiles ran faster. Nsight Compute's L2 and DRAM counts of one launch,
# HEAD's package ("old") against HEAD with the patch ("new"), on 16 groups of 1025 rows (a one-row tail each) and of
# 1024 (no tail). If the guess holds (tail tiles that finish sooner break the banded order's B sharing in L2), "new"
# shows more L2 sector misses and DRAM reads on the 1025-row groups only. One device call, ~3 minutes.
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
mkdir -p /tmp/tree_old && git archive HEAD | tar -x -C /tmp/tree_old --exclude=tests --exclude=benchmarks
git apply benchmarks/experiments/tail_pairs.patch || { echo "tail_pairs.patch does not apply"; exit 1; }
ab_install new . old /tmp/tree_old
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
METRICS=gpu__time_duration.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum
for s in old new; do
  for shape in 16,1025,4096,7168 16,1024,4096,7168; do
    JDG_PROFILE_RUNS=1 side $s timeout -k 5 150 "$NCU" -k regex:jdg_fp8_gemm -c 1 --clock-control none \
      --metrics "$METRICS" python $R/tools/profile_one.py ragged "$shape" 2>&1 |
      grep -E "gpu__|lts__|dram__|rror" | sed "s/^/$s $shape | /" | tee -a "$OUT/ncu.txt"
  done
done
git checkout -- cuda ffi tests
