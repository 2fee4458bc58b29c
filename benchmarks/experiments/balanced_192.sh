#!/usr/bin/env bash
# 128 x 192 tiles on the fewest CTAs that keep their rounds, with and without clusters sharing B (NOTES 80): on
# 4096 x 2112 x 7168 no clusters on 118 CTAs ran 103.0 us against the pick's 106.1 (132 CTAs, clusters), as
# DeepGEMM launches its 128 x 192 kernel (118 CTAs, 3 tiles each). Same call, two rounds, each row that takes 128-row
# tiles wider than 128: the pick (132 SMs), the pick and no clusters with the SM count capped at the balanced grid.
#   bash benchmarks/experiments/balanced_192.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-balanced
rows=(4096,2112,7168:118 8192,2112,7168:118 16384,2112,7168:128 4096,2112,4096:118 4096,2112,2048:118
      4096,1536,7168:128)
run() {  # label, SM count, shape, then environment settings
  local label=$1 sms=$2 shape=$3; shift 3
  env "$@" timeout -k 5 60 python benchmarks/experiments/sms_rows.py "$sms" dense_rows.py "$shape" 2>&1 |
    grep -E " us |rror" | sed "s/^/$label | /"
}
for round in 1 2; do
  for row in "${rows[@]}"; do
    shape=${row%%:*} sms=${row##*:}
    run pick132 132 "$shape"
    run pick$sms "$sms" "$shape"
    run nocluster$sms "$sms" "$shape" DG_TUNE_CLUSTER=1
  done
done | tee "$OUT/balanced_192.txt"
echo "elapsed $((SECONDS - start)) s"
