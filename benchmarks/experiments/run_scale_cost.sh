#!/usr/bin/env bash
# What do the promotion's scale reads cost the K loop? ptxas places the scale product (A row scale x B block scale,
# one FMUL per row) between the K block's first and second wgmma, where it waits for the LDS of the row scales and the
# shuffle of the B scale. The DG_PROFILE_WAITS cycles per K block of 4096 x 7168 x 16384 (256 x 128 and 128 x 128)
# for the kernel as it is, with the B scale replaced by 1 (no shuffle, no FMUL) and with both scales 1 (no LDS
# either): the results are wrong, the timing says what the scale path costs. Run from the repo root on the GPU
# machine after the build; logs under $OUT; restores cuda/ at the end.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=5
src=cuda/jax_deepgemm/fp8_gemm.cuh
cp "$src" /tmp/fp8_gemm.cuh.orig
run() {  # variant
  for bm in 256 128; do
    echo "## dense 4096,7168,16384 variant=$1 DG_TUNE_BLOCK_M=$bm DG_TUNE_BLOCK_N=128"
    DG_JIT_CACHE_DIR="/tmp/jdg-cache-$1" DG_TUNE_BLOCK_M=$bm DG_TUNE_BLOCK_N=128 timeout -k 5 90 \
      python tools/profile_one.py dense 4096,7168,16384 2>&1 | grep -v -E "^I[0-9]|^E[0-9]{4} "
  done
}
{
  run base
  sed -i 's/sb\[j\] = ptx::shfl_f32(sb_chunk\[j\], in_chunk);/sb[j] = 1.0f;/' "$src"
  run no_b_scale
  sed -i -E 's/const float (sa[01]) = sa_stage\[box \* \(kSASlotFloats - kSABoxRows\) \+ r0( \+ 8)?\];/const float \1 = 1.0f;/' "$src"
  run no_scales
} >"$OUT/scale_cost.log"
cp /tmp/fp8_gemm.cuh.orig "$src"
python tools/waits_summary.py <"$OUT/scale_cost.log" | tee "$OUT/scale_cost_summary.txt"
