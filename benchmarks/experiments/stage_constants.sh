#!/usr/bin/env bash
# The two-wave K loop unrolled over the ring with constant slot indices, the ring restarted at every pass
# (stage_constants.patch; benchmarks/NOTES.md 86): its GPU tests on the kernels it changes (256-row tiles: dense,
# contiguous, ragged, masked), then dense and masked rows (two rounds) and contiguous ones (one), new / old headers
# alternating.
#   bash benchmarks/experiments/stage_constants.sh   (one device call, ~8 min)
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_patch_vs_head benchmarks/experiments/stage_constants.patch
ab_tests stage_constants tests/test_gpu_dense.py tests/test_gpu_grouped.py -k "sweep or scan or masked or contiguous"
ab_dense 2 4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,24576,1536 4096,32768,512 |
  tee "$OUT/stage_constants_dense.txt"
AB_ROUNDS=2 ab_grouped masked | tee "$OUT/stage_constants_masked.txt"
ab_grouped contiguous | tee "$OUT/stage_constants_contiguous.txt"
echo "elapsed $((SECONDS - start)) s"
