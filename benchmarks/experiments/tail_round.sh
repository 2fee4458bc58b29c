#!/usr/bin/env bash
# Where the tail split's second round goes (NOTES 79): masked 1 x 1024 x 4096 x 7168 on a draw of 1108 rows (five
# 256-row blocks, 160 tiles of 256 x 128: a round of 132 whole tiles, then 28 split over K by pairs of CTAs) under
# the DG_PROFILE_WAITS build, with the tail split (the model) and without; per-CTA durations grouped by K blocks
# (tail_round.py). Then the same problem's dense twin (1108 x 4096 x 7168, the same tiles). One device call:
#   bash benchmarks/experiments/tail_round.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-tail-round DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=5
prof() {  # label, then profile_one.py's arguments
  local label=$1; shift
  echo "## $label $(env | grep -E '^DG_TUNE' | sort | tr '\n' ' ')"
  timeout -k 5 120 python tools/profile_one.py "$@" >"$OUT/$label.log" 2>&1
  grep -m2 -iE "config|block_m" "$OUT/$label.log" | cut -c1-200
  python benchmarks/experiments/tail_round.py <"$OUT/$label.log"
}
{
  prof masked_tail masked 1,4096,4096,7168,1108,1024
  DG_TUNE_TAIL_SPLIT=0 prof masked_no_tail masked 1,4096,4096,7168,1108,1024
  DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=1 DG_TUNE_TAIL_SPLIT=1 prof dense_tail dense 1108,4096,7168
  DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=1 DG_TUNE_TAIL_SPLIT=0 prof dense_no_tail dense 1108,4096,7168
  # The half tiles alone: K = 3584 (28 K blocks), 56 tiles of 28 K blocks on 56 SMs, no exchange
  DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=1 DG_TUNE_TAIL_SPLIT=0 JDG_PROFILE_SMS=56 \
    prof dense_half_56 dense 1792,1024,3584
} 2>&1 | tee "$OUT/tail_round.txt"
echo "elapsed $((SECONDS - start)) s"
