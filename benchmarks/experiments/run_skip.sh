#!/usr/bin/env bash
# benchmarks/NOTES.md 14: the K loop's cycles with the promotion skipped, the TMA writes skipped, or both
# (skip_promotion_loads.patch), for a few kernels (`run_skip.sh`) or, with both skipped, per forced tile width
# (`run_skip.sh widths`); on the GPU machine once the package is built. Restores the kernel header when done. Logs
# and summaries under $OUT/skip_<variant>.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
cd "$(dirname "$0")/../.."
header=cuda/jax_deepgemm/fp8_gemm.cuh
cp "$header" /tmp/fp8_gemm.cuh.orig
patch -p1 -s < benchmarks/experiments/skip_promotion_loads.patch || exit 1
cp "$header" /tmp/fp8_gemm.cuh.patched
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=5 PYTHONUNBUFFERED=1
run() {
  echo "## $* $(env | grep -E '^DG_TUNE' | sort | tr '\n' ' ')"
  timeout -k 5 90 python tools/profile_one.py "$@" 2>&1 | grep -E "waits:|jax_deepgemm: "
}
cases() {
  if [ "${1:-}" = widths ]; then
    for bn in 64 128 192 256; do DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=$bn DG_TUNE_ACC_PIPELINE=0 run dense 4096,7168,16384; done
    for bn in 64 128; do DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=$bn run dense 4096,7168,16384; done
    DG_TUNE_BLOCK_M=64 DG_TUNE_BLOCK_N=256 run dense 4096,7168,16384
  else
    run dense 4096,7168,16384
    DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 run dense 4096,7168,16384
    DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 DG_TUNE_ACC_PIPELINE=0 run dense 4096,7168,16384
    run k_grouped 4,4096,7168,8192
  fi
}
variants=(none SKIP_PROMOTION SKIP_LOADS "SKIP_PROMOTION SKIP_LOADS")
[ "${1:-}" = widths ] && variants=("SKIP_PROMOTION SKIP_LOADS")
for variant in "${variants[@]}"; do
  name=$(echo "$variant" | tr ' ' '_')${1:+_$1}
  cp /tmp/fp8_gemm.cuh.patched "$header"
  for v in $variant; do [ "$v" = none ] || sed -i "1i #define JDG_EXP_$v 1" "$header"; done
  export DG_JIT_CACHE_DIR=/tmp/jdg-exp-$name
  rm -rf "$DG_JIT_CACHE_DIR"
  mkdir -p "$OUT/skip_$name"
  cases "${1:-}" >"$OUT/skip_$name/waits.log"
  python tools/waits_summary.py <"$OUT/skip_$name/waits.log" | sed "s/^/$name: /" | tee "$OUT/skip_$name/summary.txt"
done
cp /tmp/fp8_gemm.cuh.orig "$header"
