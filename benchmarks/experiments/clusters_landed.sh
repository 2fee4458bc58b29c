#!/usr/bin/env bash
# Step 5's new clusters as landed (NOTES 75): the GPU tests that take them by default (dense rows that are not
# 128-byte multiples, masked rows crossing 32-byte sectors, k-grouped 256-row tiles) and the forced k-grouped
# configurations; then clusters (DG_TUNE_CLUSTER=2) against none (=1) where the model has not measured them: dense
# M < 512 over unaligned K, masked over K = 2000 (128 x 64 tiles), two rounds. One device call, from the repo root:
#   bash benchmarks/experiments/clusters_landed.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/cl_cache
JDG_TEST_LIMIT=240 ab_tests landed tests/test_gpu_dense.py tests/test_gpu_grouped.py \
  -k "unaligned or masked or k_grouped"
JDG_TEST_LIMIT=200 ab_tests configs tests/test_gpu_configs.py -k "k_grouped"
for round in 1 2; do for c in 1 2; do
  export DG_TUNE_CLUSTER=$c
  timeout -k 5 100 python benchmarks/experiments/dense_rows.py 256,7168,6000 128,7168,6000 64,7168,6000 \
    256,4096,4000 2>&1 | grep -E " us |rror" | sed "s@^@cluster=$c r$round @"
  timeout -k 5 100 python benchmarks/experiments/grouped_rows.py masked=4,256,7168,2000 masked=1,1024,4096,2000 \
    masked=2,512,7168,6000 2>&1 | grep -E " us |rror" | sed "s@^@cluster=$c r$round @"
done; done | tee "$OUT/ab.txt"
echo "elapsed $((SECONDS - start)) s"
