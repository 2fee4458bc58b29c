#!/usr/bin/env bash
# Masked clusters sharing B where no pair idles (NOTES 84). 79 measured masked_multicast_b.patch slower everywhere, but
# on draws where every group had an odd count of M blocks, so that a pair's second CTA computed nothing. Here every
# group's masked_m is its expected M (JDG_EXACT=1: 1024 / 512 / 256 rows, an even count of 128-row blocks per group;
# 128 and 64 rows, one), so where it is even the pairs are all full: what sharing B gains per tile. One device call,
# from the repo root:
#   bash benchmarks/experiments/masked_exact_pairs.sh
# Applies the patch to the device's copy unless the tree already has it, runs its GPU tests, then masked_draws.py
# under the model, 128 x 128 alone / sharing A / sharing B, 256 x 128 sharing B, the model again; other settings as
# arguments instead (each one argument, "" for the model; JDG_SHAPES=i,j,... as masked_draws.py takes it;
# JDG_NO_TESTS=1 skips the tests).
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_patched benchmarks/experiments/masked_multicast_b.patch
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-exact JDG_EXACT=1
if [ -z "${JDG_NO_TESTS:-}" ]; then
  timeout -k 5 120 python -I -m pytest tests/test_gpu_configs.py -q -rs -p no:cacheprovider -k "multicast_b_masked" \
    >"$OUT/tests_multicast_b_masked.log" 2>&1
  grep -E "^FAILED|^ERROR|passed|failed" "$OUT/tests_multicast_b_masked.log" | tail -4
fi
t128="DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128"
mb="DG_TUNE_CLUSTER=2 DG_TUNE_MULTICAST_B=1"
[ $# -gt 0 ] || set -- "" "$t128 DG_TUNE_CLUSTER=1" "$t128 DG_TUNE_CLUSTER=2" "$t128 $mb" \
                      "DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 $mb" ""
for setting in "$@"; do
  # shellcheck disable=SC2086  # the setting is words
  env $setting timeout -k 5 100 python benchmarks/experiments/masked_draws.py 1 2>&1 | grep -E " us |rror" |
    sed "s/^/${setting:-model} | /"
done | tee "$OUT/masked_exact_pairs.txt"
echo "elapsed $((SECONDS - start)) s"
