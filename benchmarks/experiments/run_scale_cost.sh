#!/usr/bin/env bash
# What do the promotion's scale reads cost the K loop? ptxas places the scale product (A row scale x B block scale,
# one FMUL per row) between each wave's first and second wgmma, where it waits for the LDS of the row scales and the
# shuffle of the B scale (NOTES 15). DG_PROFILE_WAITS cycles per K block of 4096 x 7168 x 16384 (256 x 128 tiles,
# and 128 x 128 without the accumulator pipeline) for:
#   base           the kernel as it is
#   after_wgmmas   scale_after_wgmmas.patch: the product made to depend on the wave's accumulator (exact), so it
#                  runs after the wgmmas; checked against the reference first (check_dense.py), then the dense
#                  M = 4096 rows against base in the same run (run_ab_head.sh)
#   no_b_scale     the B scale replaced by 1 (no shuffle, no FMUL; wrong results, timing only)
#   no_scales      both scales 1 (no LDS either; timing only)
# Run from the repo root on the GPU machine after the build; logs under $OUT; cuda/ is restored at the end.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
export DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=5
src=cuda/jax_deepgemm/fp8_gemm.cuh
profile() {  # variant; both tile kinds without the accumulator pipeline (the loop the patch changes)
  for bm in 256 128; do
    echo "## dense 4096,7168,16384 variant=$1 DG_TUNE_BLOCK_M=$bm DG_TUNE_BLOCK_N=128 DG_TUNE_ACC_PIPELINE=0"
    DG_PROFILE_WAITS=1 DG_JIT_CACHE_DIR="/tmp/jdg-cache-$1" DG_TUNE_BLOCK_M=$bm DG_TUNE_BLOCK_N=128 \
      DG_TUNE_ACC_PIPELINE=0 timeout -k 5 90 python tools/profile_one.py dense 4096,7168,16384 2>&1 |
      grep -v -E "^I[0-9]|^E[0-9]{4} "
  done
}
git apply benchmarks/experiments/scale_after_wgmmas.patch
for bm in 256 128; do
  DG_POISON_OUTPUTS=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache-check DG_TUNE_BLOCK_M=$bm DG_TUNE_BLOCK_N=128 DG_TUNE_ACC_PIPELINE=0 \
    timeout -k 5 120 \
    python benchmarks/experiments/check_dense.py 4096,7168,1024 512,256,384 300,7168,2048 256,512,8192 2>&1 | grep check |
    sed "s/^/after_wgmmas ${bm}x128 /"
done | tee "$OUT/scale_check.txt"
AB_ROUNDS=1 timeout -k 5 300 bash benchmarks/experiments/run_ab_head.sh | tee "$OUT/scale_ab.txt"
{
  profile after_wgmmas
  git checkout -q -- cuda
  profile base
  sed -i 's/sb\[j\] = ptx::shfl_f32(sb_chunk\[j\], in_chunk);/sb[j] = 1.0f;/' "$src"
  profile no_b_scale
  sed -i -E 's/const float (sa[01]) = sa_stage\[box \* \(kSASlotFloats - kSABoxRows\) \+ r0( \+ 8)?\];/const float \1 = 1.0f;/' "$src"
  profile no_scales
} >"$OUT/scale_cost.log"
git checkout -q -- cuda
python tools/waits_summary.py <"$OUT/scale_cost.log" | tee "$OUT/scale_cost_summary.txt"
gzip -f "$OUT/scale_cost.log"
