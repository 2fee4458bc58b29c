#!/usr/bin/env bash
# Whole-width 128 x 192 tiles with the next stage waited for ahead and the B block scales of both scale blocks
# loaded 32 K blocks at a time (NOTES 80). After whole_wait_ahead.sh, Nsight Compute showed our whole-width loop
# stalled on long-scoreboard waits twice as long as DeepGEMM's (1.20 against 0.55 cycles per issue): its B scales,
# one global load per K block and block, were consumed by FMULs that ptxas put before the K block's last wgmma.
# whole_chunks.patch = whole_wait_ahead.patch plus the dense loop's chunked B-scale loads (load_b_scale_chunk) for
# one-wave tiles over two scale blocks without half-width groups or the pipeline. Same call, two rounds: the kernel
# as committed (old: half-width groups, the pick) against the patched one, whole width forced (DG_TUNE_SPLIT_HALVES=0,
# 128 x 192) in clusters sharing B and without clusters, on 132 and 118 SMs; DeepGEMM's 128 x 192 kernels (.dgprobe,
# carried; built from its public source for measurement only); then the whole-width GPU tests with the patch.
#   bash benchmarks/experiments/whole_chunks.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
chmod +x .dgprobe/dg_dense_bench
ab_sent
ab_side new benchmarks/experiments/whole_chunks.patch || exit 1
rows=(4096,2112,7168 8192,2112,7168 2048,2112,7168 4096,2112,2048)
whole=(DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 DG_TUNE_SPLIT_HALVES=0)
ours() {  # side, label, SM count, then environment settings
  local side=$1 label=$2 sms=$3; shift 3
  ab_use "$side"
  env DG_JIT_CACHE_DIR="/tmp/ab_cache_$side" "$@" timeout -k 5 100 python benchmarks/experiments/sms_rows.py "$sms" \
    dense_rows.py "${rows[@]}" 2>&1 | grep -E " us |rror" | sed "s/^/$side $label | /"
}
for round in 1 2; do
  echo "round $round"
  ours old pick132 132
  ours new wholemc132 132 "${whole[@]}"
  ours new wholenc132 132 "${whole[@]}" DG_TUNE_CLUSTER=1
  ours new wholemc118 118 "${whole[@]}"
  ours new wholenc118 118 "${whole[@]}" DG_TUNE_CLUSTER=1
  timeout -k 5 60 ./.dgprobe/dg_dense_bench --rows 16,17 2>&1 | grep -v "^#" | sed "s/^/dg | /"
done | tee "$OUT/whole_chunks.txt"
ab_use new
DG_JIT_CACHE_DIR=/tmp/ab_cache_new JDG_TEST_LIMIT=200 ab_tests whole_width tests/test_gpu_configs.py \
  -k "split_halves and halves0"
ab_use old
echo "elapsed $((SECONDS - start)) s"
