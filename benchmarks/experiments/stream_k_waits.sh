#!/usr/bin/env bash
# Where stream-K's time goes (NOTES 69): DG_PROFILE_WAITS builds without / with DG_TUNE_STREAM_K=1 on two dense rows,
# every CTA's consumer and producer cycles, waits and elapsed ns (tools/waits_summary.py sums them up; the raw logs
# keep each CTA). One device call, from the repo root: bash benchmarks/experiments/stream_k_waits.sh
set -uo pipefail
git apply benchmarks/experiments/stream_k.patch || exit 1  # the experiment's kernel and host code
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=5 DG_JIT_CACHE_DIR=/tmp/jdg-cache-skw
for shape in 4096,7168,2048 4096,2112,7168 4096,32768,512; do
  for sk in 0 1; do
    echo "## $shape sk$sk"
    DG_TUNE_STREAM_K=$sk timeout -k 5 90 python tools/profile_one.py dense $shape 2>&1 | grep -v "^I[0-9]"
  done
done >"$OUT/waits.log"
python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
echo "elapsed $((SECONDS - start)) s"
