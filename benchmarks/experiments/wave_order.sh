#!/usr/bin/env bash
# The two-wave loop's turns (wave_turns.patch, NOTES 43; measured, not taken): same-run A/B of the kernel with them
# against the kernel without, on the rows that take 256-row tiles (dense M = 4096, contiguous / ragged, k-grouped),
# new / old alternating; then the DG_PROFILE_WAITS timeline of each side (wave_trace.py: period, issue-to-done,
# promotion, how far warpgroup 1 trails warpgroup 0, time with no wave in flight). One device call, from the repo
# root:  bash benchmarks/experiments/wave_order.sh   (~210 s)
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
# old: the working tree's headers; new: the same with wave_turns.patch applied
rm -rf /tmp/order_off_cuda && cp -r cuda /tmp/order_off_cuda
git apply benchmarks/experiments/wave_turns.patch || { echo "wave_turns.patch does not apply"; exit 1; }
ab_prepare /tmp/order_off_cuda
{
  ab_dense 2 4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,24576,1536 4096,32768,512 2048,2112,7168
  ab_grouped k_grouped contiguous
  ab_grouped k_grouped contiguous
} 2>&1 | tee "$OUT/wave_order.txt"
for v in new old; do
  ab_use $v
  for run in "dense 4096,7168,16384" "k_grouped 4,4096,7168,8192"; do
    echo "## $v $run"
    DG_PROFILE_WAITS=1 JDG_PROFILE_RUNS=3 DG_JIT_CACHE_DIR=/tmp/ab_cache_pw_$v timeout -k 5 90 \
      python tools/profile_one.py $run >"$OUT/trace_${v}_${run%% *}.log" 2>&1
    python benchmarks/experiments/wave_trace.py <"$OUT/trace_${v}_${run%% *}.log"
    grep "waits:" "$OUT/trace_${v}_${run%% *}.log" | tail -3
  done
done 2>&1 | tee "$OUT/wave_trace.txt"
ab_use new
gzip -f "$OUT"/trace_*.log
echo "elapsed $((SECONDS - start)) s"
