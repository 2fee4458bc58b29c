#!/usr/bin/env bash
# Contiguous GEMMs with dynamic tiles where the tiles are 128 rows (session 90). Forced on the table's contiguous rows
# (contiguous_dynamic_waits.sh, publish_order.sh: three machines), dynamic tiles ran +0.2..+2.3% behind the static
# order on the 256-row tiles (clusters of 2) but -2.2..-3.3% ahead on 16 x 512 x 3072 x 4096 (128 x 192 tiles, no
# cluster), and the heuristics give 128-row tiles to 9 of moe_models.py's 12 contiguous layers.
# Prediction: those 9 layers 1-4% faster with DG_TUNE_DYNAMIC_TILES=1 (the 128-row ones gain as ragged's do), the
# three 256-row ones (dsv3_up_16k, mixtral) 0-2% slower; the MoE training step's kernels (its contiguous GEMMs take
# 128-row tiles) faster by some of its contiguous time.
# One device call: moe_models.py's contiguous rows (even and skewed draws), two rounds without / with
# DG_TUNE_DYNAMIC_TILES=1; then the MoE step's kernels (step_kernels.py moe_x_bf16), two rounds likewise.
# Ran on an H200, 2026-12-02 (NOTES 136, tests/gpu_runs/2026-12-02_session90/04_): -7.2% to +3.0%, with no rule in
# the tile: 128-row layers from -7.2% (qwen30_down) to +3.0% (qwen30_up, dsv3_down_4k even), 256-row ones -3.7% to
# +0.3%; K <= 1536 gained in both draws (two layers). The MoE step level: 5401.1 / 5399.1 us of kernels.
. "$(dirname "$0")/prelude.sh"
build
moe_contiguous_rounds moe_rows.txt dt DG_TUNE_DYNAMIC_TILES=1 >/dev/null
ab DG_TUNE_DYNAMIC_TILES 1 python benchmarks/experiments/step_kernels.py moe_x_bf16 2>&1 |
  grep -E "^#|us of kernels|jdg_fp8_gemm" | tee "$OUT/step.txt"
date -u
