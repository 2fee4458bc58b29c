#!/usr/bin/env bash
# C pulled into L2 by one tensor prefetch per tile (DG_TUNE_C_PREFETCH=D: D K blocks before the tile's end) against
# none (DG_TUNE_C_PREFETCH=0), on the k-grouped rows (f32 C) and the dense rows with C; the GPU tests with C under it
# first. One build serves every side. NOTES 74. Measured at 20dd759 with the experiment's c_tensor_prefetch.patch
# (applied here when it applies; since 4ec1206 the tree has the knob itself). One device call, from the repo root:
#   [CPF_DS="none 4 8 16"] [CPF_DENSE_DS="none 8"] bash benchmarks/experiments/c_tensor_prefetch.sh \
#     [tests|kgrouped|dense|sustained]...
# (sustained: benchmarks/experiments/sustained.py with the tree's defaults.)
set -uo pipefail
if git apply --check benchmarks/experiments/c_tensor_prefetch.patch 2>/dev/null; then
  git apply benchmarks/experiments/c_tensor_prefetch.patch || exit 1
fi
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/cpf_cache
parts=("$@"); [ ${#parts[@]} -gt 0 ] || parts=(tests kgrouped dense)
for part in "${parts[@]}"; do case "$part" in
  tests)
    DG_TUNE_C_PREFETCH=8 JDG_TEST_LIMIT=200 ab_tests cpf8 tests/test_gpu_grouped.py -k k_grouped
    DG_TUNE_C_PREFETCH=2 JDG_TEST_LIMIT=200 ab_tests cpf2_dense tests/test_gpu_dense.py -k "options or odd_n or scan" ;;
  kgrouped)
    for round in 1 2; do for d in ${CPF_DS:-none 4 8 16}; do
      export DG_TUNE_C_PREFETCH=$([ $d = none ] && echo 0 || echo $d)
      timeout -k 5 100 python benchmarks/experiments/grouped_rows.py k_grouped 2>&1 | grep -E " us |rror" |
        sed "s@^@d=$d r$round @"
    done; done | tee -a "$OUT/ab.txt"
    unset DG_TUNE_C_PREFETCH ;;
  dense)
    for round in 1 2; do for d in ${CPF_DENSE_DS:-none 8}; do
      export DG_TUNE_C_PREFETCH=$([ $d = none ] && echo 0 || echo $d)
      timeout -k 5 60 python benchmarks/experiments/dense_rows.py c=f32 4096,7168,16384 4096,4096,7168 2048,2112,7168 \
        128,4096,7168 2>&1 | grep -E " us |rror" | sed "s@^@d=$d r$round @"
      timeout -k 5 60 python benchmarks/experiments/dense_rows.py c=bf16 4096,7168,2048 4096,4096,7168 2>&1 |
        grep -E " us |rror" | sed "s@^@d=$d r$round @"
    done; done | tee -a "$OUT/ab.txt"
    unset DG_TUNE_C_PREFETCH ;;
  sustained)
    timeout -k 5 150 python benchmarks/experiments/sustained.py 100 2>&1 | grep -v "^W0\|^I0" |
      tee "$OUT/sustained.txt" ;;
esac; done
echo "elapsed $((SECONDS - start)) s"
