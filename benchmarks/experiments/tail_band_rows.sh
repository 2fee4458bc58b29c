#!/usr/bin/env bash
# The tail split on whole band rows (NOTES 79; tail_band_rows.patch, applied to the device's copy): a tail-split
# kernel takes its tiles on the grid rounded down to a multiple of 16 CTAs where its rounds (a split last round as
# half of one) cost no more; the CTAs past them take no tile. NOTES 79's control ran the long-K masked rows on 128
# SMs 0-3% faster than on 132. Measured, not taken. One device call, from the repo root (old side: HEAD's cuda/):
#   bash benchmarks/experiments/tail_band_rows.sh
# The tail split's masked and contiguous configuration tests, the new band-rows case and the masked GPU tests with
# the new headers, then the masked long-K rows over four draws (masked_draws.py), new and old alternating, two rounds.
set -uo pipefail
git apply benchmarks/experiments/tail_band_rows.patch || { echo "the patch does not apply"; exit 1; }
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_prepare
JDG_TEST_LIMIT=200 ab_tests tail tests/test_gpu_configs.py -k \
  "tail_split_masked or tail_split_contiguous or tail_split_inside_scan or band_rows"
JDG_TEST_LIMIT=150 ab_tests masked tests/test_gpu_grouped.py -k masked
export JDG_SHAPES=0,2,4,6,8  # the long-K shapes, where the model takes the tail split
ab_rows 2 1 100 masked_draws.py 4 | tee "$OUT/tail_band_rows.txt"
echo "elapsed $((SECONDS - start)) s"
