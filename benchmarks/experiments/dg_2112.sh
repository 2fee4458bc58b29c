#!/usr/bin/env bash
# 4096 x 2112 x 7168, where DeepGEMM's own 128 x 192 kernel ran 94-95 us against our 106-107 in one call (NOTES 80):
# which of the grid (DeepGEMM launches 118 CTAs, 3 tiles each; we launch 132), B's multicast and the half-width
# groups makes the difference. Same call, two rounds: ours as picked, on 118 SMs, without clusters, and whole width
# (experiments/whole_width_offsets.patch, DG_TUNE_SPLIT_HALVES=0); DeepGEMM's 128 x 192 kernels (rows 16, 17 of
# .dgprobe/dg_dense_bench, carried: built from DeepGEMM's public source for measurement only) on 118 and 132 CTAs.
#   bash benchmarks/experiments/dg_2112.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
chmod +x .dgprobe/dg_dense_bench
git apply benchmarks/experiments/whole_width_offsets.patch || exit 1
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-2112
shape=4096,2112,7168
ours() {  # label, SM count, then environment settings
  local label=$1 sms=$2; shift 2
  env "$@" timeout -k 5 60 python benchmarks/experiments/sms_rows.py "$sms" dense_rows.py $shape 2>&1 |
    grep -E " us |rror" | sed "s/^/ours $label | /"
}
for round in 1 2; do
  echo "round $round"
  ours pick132 132
  ours pick118 118
  ours nocluster132 132 DG_TUNE_CLUSTER=1
  ours nocluster118 118 DG_TUNE_CLUSTER=1
  ours whole132 132 DG_TUNE_CLUSTER=1 DG_TUNE_SPLIT_HALVES=0
  ours whole118 118 DG_TUNE_CLUSTER=1 DG_TUNE_SPLIT_HALVES=0
  ours wholemc118 118 DG_TUNE_SPLIT_HALVES=0
  for sms in 0 132; do
    args=(--rows 16,17); [ "$sms" = 0 ] || args+=(--sms "$sms")
    timeout -k 5 60 ./.dgprobe/dg_dense_bench "${args[@]}" 2>&1 | grep -v "^#" | sed "s/^/dg sms$sms | /"
  done
done | tee "$OUT/dg_2112.txt"
git apply -R benchmarks/experiments/whole_width_offsets.patch
echo "elapsed $((SECONDS - start)) s"
