#!/usr/bin/env bash
# Whole-width 128 x 192 tiles with the next stage waited for ahead (NOTES 80). DeepGEMM's 128 x 192 kernel (one wgmma
# group per K block, as our whole-width loop) ran 4096 x 2112 x 7168 in 93.6 us against our half-width groups' 106:
# its loop probes the next stage's barrier while it promotes, ours waited for it at the top of each K block.
# whole_wait_ahead.patch = whole_width_offsets.patch (each chunk's scale block at compile time) plus, for one-wave
# tiles wider than 128 without half-width groups, the two-wave loop's wait ahead and its all-active loop copy.
# Same call, two rounds: the kernel as committed (old: half-width groups, the pick) against the patched one, whole
# width forced (DG_TUNE_SPLIT_HALVES=0, 128 x 192) in clusters sharing B and without clusters, on 132 and 118 SMs;
# DeepGEMM's 128 x 192 kernels (.dgprobe, carried; built from its public source for measurement only); then the
# whole-width GPU tests with the patch. A patch named as the argument replaces it: whole_chunks.patch = this one plus
# the dense loop's chunked B-scale loads (load_b_scale_chunk) for one-wave tiles over two scale blocks without
# half-width groups or the pipeline, after Nsight Compute found the whole-width loop's long-scoreboard stalls twice
# DeepGEMM's (its FMULs of the per-K-block global B-scale loads sat before the K block's last wgmma).
#   bash benchmarks/experiments/whole_wait_ahead.sh [whole_chunks.patch]
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
chmod +x .dgprobe/dg_dense_bench
ab_sent
patch=${1:-whole_wait_ahead.patch}
ab_side new "benchmarks/experiments/$patch" || exit 1
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
  ours new pick132 132
  ours new wholemc132 132 "${whole[@]}"
  ours new wholenc132 132 "${whole[@]}" DG_TUNE_CLUSTER=1
  ours new wholemc118 118 "${whole[@]}"
  ours new wholenc118 118 "${whole[@]}" DG_TUNE_CLUSTER=1
  timeout -k 5 60 ./.dgprobe/dg_dense_bench --rows 16,17 2>&1 | grep -v "^#" | sed "s/^/dg | /"
done | tee "$OUT/${patch%.patch}.txt"
ab_use new
DG_JIT_CACHE_DIR=/tmp/ab_cache_new JDG_TEST_LIMIT=200 ab_tests whole_width tests/test_gpu_configs.py \
  -k "split_halves and halves0"
ab_use old
echo "elapsed $((SECONDS - start)) s"
