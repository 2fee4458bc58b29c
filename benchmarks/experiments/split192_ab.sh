#!/usr/bin/env bash
# 192-wide tiles with the scale-block offset at compile time (NOTES 32): same-run A/B of the working tree's kernel
# headers against AB_OLD_DIR's (else HEAD's), kernel time only, alternating over two rounds: the default picks that
# take 64 / 128 x 192 tiles, and forced 128 x 192 tiles (clusters of 1 and 2) on M = 4096 rows. Then the half-width
# GPU tests (every mode, both offsets) and the dense GPU file. One device call; logs under $OUT.
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare "${AB_OLD_DIR:-}"
rows() {  # label: the rows, each process with its own settings
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$1 timeout -k 5 60 python benchmarks/experiments/dense_rows.py 64,24576,1536 \
    128,24576,1536 2>&1 | grep -E " us |rror"
  for c in 1 2; do
    DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 DG_TUNE_CLUSTER=$c DG_JIT_CACHE_DIR=/tmp/ab_cache_$1 timeout -k 5 80 \
      python benchmarks/experiments/dense_rows.py 4096,2112,7168 4096,24576,1536 2048,7168,2048 4096,7168,7168 2>&1 |
      grep -E " us |rror" | sed "s/^/128x192 c$c /"
  done
}
for round in 1 2; do for v in new old; do
  ab_use $v
  rows $v | sed "s/^/$v r$round /"
done; done | tee "$OUT/ab_dense.txt"
ab_use new
echo "after A/B: $((SECONDS - start)) s" | tee -a "$OUT/machine.txt"
left=$((580 - (SECONDS - start)))
[ $left -gt 60 ] || exit 0
export DG_JIT_CACHE_DIR=/tmp/tests_cache
timeout -k 5 $left python -I -m pytest tests/test_gpu_configs.py -k split_halves -q -rs -p no:cacheprovider 2>&1 |
  grep -v -E "^E[0-9]{4} |^$" >"$OUT/tests_split_halves.log" &
timeout -k 5 $left python -I -m pytest tests/test_gpu_dense.py -q -rs -p no:cacheprovider 2>&1 |
  grep -v -E "^E[0-9]{4} |^$" >"$OUT/tests_dense.log" &
wait
for f in "$OUT"/tests_*.log; do echo "$f: $(tail -n 1 "$f")"; done
