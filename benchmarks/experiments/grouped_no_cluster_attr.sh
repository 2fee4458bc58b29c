#!/usr/bin/env bash
# Grouped kernels without clusters launched with no cluster attribute, as dense ones since 414e5ce (NOTES 81):
# grouped_no_cluster_attr.patch adds JDG_EXP_GROUPED_NO_CLUSTER_ATTR to the host's launch. One build; first the
# grouped GPU tests with it (the condition for landing it), then the grouped table rows (grouped_rows.py) with and
# without it, alternating, two rounds (rows whose pick has clusters are unchanged: controls).
#   bash benchmarks/experiments/grouped_no_cluster_attr.sh   (on fe93360's tree, where it ran: NOTES 82; the launch
#   comment it patches has changed since)
set -uo pipefail
git apply benchmarks/experiments/grouped_no_cluster_attr.patch || exit 1  # host code: before the build
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/gnca-cache
JDG_EXP_GROUPED_NO_CLUSTER_ATTR=1 timeout -k 5 300 python -I -m pytest tests/test_gpu_grouped.py -q \
  -p no:cacheprovider >"$OUT/tests_grouped.log" 2>&1
echo "grouped tests: $(grep -E "passed|failed" "$OUT/tests_grouped.log" | tail -1)"
grep -E "^FAILED" "$OUT/tests_grouped.log" | head
for round in 1 2; do
  for side in none attr; do
    if [ "$side" = none ]; then export JDG_EXP_GROUPED_NO_CLUSTER_ATTR=1; else unset JDG_EXP_GROUPED_NO_CLUSTER_ATTR; fi
    DG_PRINT_CONFIGS=1 timeout -k 5 150 python benchmarks/experiments/grouped_rows.py masked contiguous k_grouped 2>&1 |
      grep -E " us |rror|cluster=1 " | sed "s/^/$side r$round /"
  done
done | tee "$OUT/grouped_no_cluster_attr.txt"
git apply -R benchmarks/experiments/grouped_no_cluster_attr.patch
