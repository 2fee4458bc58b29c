#!/usr/bin/env bash
# benchmarks/NOTES.md 14: A from registers (a_from_registers.patch) against the kernel as it is: correctness on three
# shapes per tile kind, the waits profile, and the M = 4096 dense rows at 128-wide tiles, same run.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
cd "$(dirname "$0")/../.."
header=cuda/jax_deepgemm/fp8_gemm.cuh
cp "$header" /tmp/orig.cuh
patch -p1 -s < benchmarks/experiments/a_from_registers.patch || exit 1
cp "$header" /tmp/patched.cuh
export DG_PRINT_CONFIGS=1 PYTHONUNBUFFERED=1 JDG_PROFILE_RUNS=5
large=(); for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do large+=(--shape "4096,$nk"); done
prof() { echo "## $* $(env | grep -E '^DG_TUNE' | sort | tr '\n' ' ')"; timeout -k 5 90 python tools/profile_one.py "$@" 2>&1 | grep -E "waits:|jax_deepgemm: "; }
for variant in rs base; do
  cp /tmp/patched.cuh "$header"
  [ $variant = rs ] && sed -i '1i #define JDG_EXP_RS 1' "$header"
  export DG_JIT_CACHE_DIR=/tmp/jdg-rs-$variant; rm -rf $DG_JIT_CACHE_DIR
  DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 python benchmarks/experiments/check_dense.py 4096,7168,1024 512,256,384 300,7168,2048 2>&1 | grep check | sed "s/^/$variant 256x128 /"
  DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 DG_TUNE_ACC_PIPELINE=0 python benchmarks/experiments/check_dense.py 4096,7168,1024 300,7168,2048 2>&1 | grep check | sed "s/^/$variant 128x128p0 /"
  { DG_PROFILE_WAITS=1 prof dense 4096,7168,16384
    DG_PROFILE_WAITS=1 DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 DG_TUNE_ACC_PIPELINE=0 prof dense 4096,7168,16384
  } > $OUT/waits_$variant.log
  python tools/waits_summary.py < $OUT/waits_$variant.log | sed "s/^/$variant /"
  DG_TUNE_BLOCK_N=128 timeout -k 5 150 python -m jax_deepgemm bench --only dense --iters 20 --output $OUT/dense_$variant.json "${large[@]}" 2>&1 | grep -E "^ +[0-9]" | sed "s/^/$variant /"
done
cp /tmp/orig.cuh "$header"
