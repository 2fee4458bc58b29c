#!/usr/bin/env bash
# Dense GEMMs whose K is not a multiple of 128 (A and B rows not 128-byte multiples: each 128-byte box row spans two
# L2 lines) in clusters of 2 (DG_TUNE_CLUSTER=2) against the model's choice, with aligned controls; then masked rows
# (grouped_rows.py masked=G,M,N,K) the same way. NOTES 18 saw 4096 x 7000 x 7000 run 21% faster in clusters; the
# model took clusters over long K only. Kernel time, two rounds. One device call, from the repo root:
#   [UK_SHAPES="M,N,K ..."] [UK_MASKED="G,M,N,K ..."] bash benchmarks/experiments/unaligned_k_clusters.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/uk_cache
shapes=${UK_SHAPES:-"4096,7000,7000 4096,7168,7000 4096,4096,4000 2048,7000,7000 8192,7168,6000 4096,7000,2000
4096,7168,7168 4096,4096,7168 4096,7168,2048"}
masked=${UK_MASKED:-}
for round in 1 2; do for c in model 2; do
  if [ $c = model ]; then unset DG_TUNE_CLUSTER; else export DG_TUNE_CLUSTER=$c; fi
  timeout -k 5 150 python benchmarks/experiments/dense_rows.py $shapes 2>&1 | grep -E " us |rror" |
    sed "s@^@cluster=$c r$round @"
  [ -z "$masked" ] || timeout -k 5 100 python benchmarks/experiments/grouped_rows.py $(printf "masked=%s " $masked) \
    2>&1 | grep -E " us |rror" | sed "s@^@cluster=$c r$round @"
done; done | tee "$OUT/ab.txt"
echo "elapsed $((SECONDS - start)) s"
