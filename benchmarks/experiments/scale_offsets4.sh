#!/usr/bin/env bash
# Prepared for a later session (NOTES 32, Next): 160-wide tiles with the scale-block offset at compile time too
# (scale_offsets4.patch: kMaxCompiledScaleOffsets 4, four copies of the half-width loop; compiled on the CPU machine:
# no FSEL left, 168 registers, no spills, the cubin 1.8x and NVRTC 2.3x as long for 128 x 160). Same-run A/B against
# HEAD's headers on rows where the model takes 128 x 160 tiles, two rounds; then the GPU tests of 160-wide tiles
# (the half-width ones, every mode) and the dense file with the patch. One device call; logs under $OUT.
# Prediction: -5 to -10% on those rows where they are not memory-bound (M >= 384), as 192 gained (NOTES 32).
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
git apply benchmarks/experiments/scale_offsets4.patch || exit 1
ab_prepare "${AB_OLD_DIR:-}"
ab_dense 2 128,18432,7168 256,18432,2048 384,6400,7168 512,5120,7168 768,3072,7168 2048,6400,2048 | tee "$OUT/ab_dense.txt"
left=$((580 - (SECONDS - start)))
[ $left -gt 60 ] || exit 0
export DG_JIT_CACHE_DIR=/tmp/tests_cache
timeout -k 5 $left python -I -m pytest tests/test_gpu_configs.py -k "split_halves or bn160" -q -rs -p no:cacheprovider \
  2>&1 | grep -v -E "^E[0-9]{4} |^$" >"$OUT/tests_bn160.log" &
timeout -k 5 $left python -I -m pytest tests/test_gpu_dense.py -q -rs -p no:cacheprovider 2>&1 |
  grep -v -E "^E[0-9]{4} |^$" >"$OUT/tests_dense.log" &
wait
for f in "$OUT"/tests_*.log; do echo "$f: $(tail -n 1 "$f")"; done
