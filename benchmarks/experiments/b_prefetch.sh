#!/usr/bin/env bash
# B prefetched into L2 ahead of the ring (benchmarks/NOTES.md 57). Small M streams B from HBM at 2.1-2.4 TB/s with 88-132
# CTAs (small_m_ctas.sh: the rate grows a little with the CTAs, so the chip's, not each SM's), while the copy ring alone
# reached ~2.85 TB/s (NOTES 23). If more requests in flight would lift it, K block kb + D's B box prefetched into L2
# (cp.async.bulk.prefetch.tensor, no shared memory) as kb is copied should: b_prefetch.patch, DG_TUNE_B_PREFETCH=D
# (compiled in only when set; without it the kernels are HEAD's). Prediction: 64 x 7168 x 16384 52 -> 45-48 us if the
# stream lacks requests in flight, +-1% if not; the M = 4096 control unchanged (its B is read from L2 anyway).
#   bash benchmarks/experiments/b_prefetch.sh      (one device call, ~4 min; logs under $OUT; the patch taken back)
# The patch applies to the kernel as one file (fp8_gemm.cuh before its split into parts): run it at 87d0762.
. "$(dirname "$0")/prelude.sh"
git apply benchmarks/experiments/b_prefetch.patch || exit 1
trap 'git apply -R benchmarks/experiments/b_prefetch.patch' EXIT
build
rows=(64,7168,16384 128,7168,16384 64,4096,7168 128,4096,7168 64,24576,1536 64,7168,2048 64,2112,7168 4096,4096,7168)
for round in 1 2; do
  for d in 0 16 32 64; do
    echo "# round $round, DG_TUNE_B_PREFETCH=$d"
    if [ "$d" = 0 ]; then unset DG_TUNE_B_PREFETCH; else export DG_TUNE_B_PREFETCH=$d; fi
    timeout -k 5 90 python benchmarks/experiments/dense_rows.py "${rows[@]}" 2>&1 | grep -E "^ *[0-9]"
  done
done | tee "$OUT/b_prefetch.txt"
unset DG_TUNE_B_PREFETCH
DG_TUNE_B_PREFETCH=32 timeout -k 5 150 python -I -m pytest tests/test_gpu_dense.py -q -p no:cacheprovider \
  >"$OUT/tests_dense_pf32.log" 2>&1
echo "test_gpu_dense.py with DG_TUNE_B_PREFETCH=32: $(tail -1 "$OUT/tests_dense_pf32.log")"
