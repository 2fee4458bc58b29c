#!/usr/bin/env bash
# Masked GEMMs with dynamic tiles, warp-uniform (masked_dynamic_tiles.patch, NOTES 134's next lead). Forced on
# masked kernels, dynamic tiles compiled divergent (ptxas could not keep the tile index uniform: 119 collective
# regions) and ran -0.5% to +5.3% against the static order (NOTES 134, 03_). The patch bounds masked's group walk as
# the ragged one is bounded (an empty group past the last), for dynamic-tiles kernels only; compiled (NVRTC 13,
# sm_90a): the masked 256 x 128 dynamic kernel 5945 SASS lines, 8 collective regions, 34 R2UR (static: 5609, 5, 35),
# and the static masked and ragged kernels byte-identical to HEAD's. Prediction: masked rows level to a few percent
# faster where masked_m varies per group (each group's last tile is cheaper, as ragged's, NOTES 124), from -0.5..+5.3%.
# One device call: the masked GPU tests with dynamic tiles forced (the grouped file's masked cases and the configs
# file's dynamic ones), then two rounds without / with DG_TUNE_DYNAMIC_TILES=1 (the tail split off on both sides) of
# the table's masked rows and two decode-sized MoE shapes.
# Ran on an H200, 2026-12-02 (NOTES 135, tests/gpu_runs/2026-12-02_session89/02_): 14 of 14 tests passed; masked rows
# -1.9% to +7.1% (1x1024x4096x7168 +7.1%, the decode shapes -0.0% / -1.3%): not taken.
. "$(dirname "$0")/prelude.sh"
git apply benchmarks/experiments/masked_dynamic_tiles.patch || exit 1
build
DG_TUNE_DYNAMIC_TILES=1 parallel_tests tests/test_gpu_grouped.py tests/test_gpu_configs.py \
  -k "masked and (not configs or dynamic_tiles)" 2>&1 | tee "$OUT/tests.txt"
ab DG_TUNE_DYNAMIC_TILES 1 env DG_TUNE_TAIL_SPLIT=0 python benchmarks/experiments/grouped_rows.py masked \
  masked=16,32,4096,7168 masked=16,64,7168,2048 2>&1 | grep -E "^#|TFLOPS" | tee "$OUT/masked.txt"
date -u
[ -d "$OUT/logs" ] && tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
