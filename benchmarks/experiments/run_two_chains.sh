#!/usr/bin/env bash
# benchmarks/NOTES.md 14: two accumulator chains per K block (two_chains.patch) against one, at forced 128 x 128
# tiles without the accumulator pipeline: correctness, K-loop cycles in full and with promotion and loads skipped
# (skip_promotion_loads.patch), and two dense rows; the kernel as it is (pipelined 128 x 128) for reference.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
cd "$(dirname "$0")/../.."
header=cuda/jax_deepgemm/fp8_gemm.cuh
cp "$header" /tmp/tc_orig.cuh
patch -p1 -s < benchmarks/experiments/skip_promotion_loads.patch && patch -p1 -s < benchmarks/experiments/two_chains.patch || exit 1
cp "$header" /tmp/tc_patched.cuh
export DG_PRINT_CONFIGS=1 PYTHONUNBUFFERED=1 JDG_PROFILE_RUNS=5 DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128
prof() { echo "## $*"; DG_PROFILE_WAITS=1 timeout -k 5 90 python tools/profile_one.py "$@" 2>&1 | grep -E "waits:|jax_deepgemm: "; }
for variant in base TWO_CHAINS "TWO_CHAINS SKIP_PROMOTION SKIP_LOADS" "SKIP_PROMOTION SKIP_LOADS"; do
  name=$(echo "$variant" | tr ' ' '_')
  cp /tmp/tc_patched.cuh "$header"
  for v in $variant; do [ "$v" = base ] || sed -i "1i #define JDG_EXP_$v 1" "$header"; done
  export DG_JIT_CACHE_DIR=/tmp/jdg-tc-$name; rm -rf "$DG_JIT_CACHE_DIR"
  case $variant in *SKIP*) ;; *)
    DG_TUNE_ACC_PIPELINE=0 python benchmarks/experiments/check_dense.py 4096,7168,1024 300,7168,2048 2>&1 | grep check | sed "s/^/$name /"
    DG_TUNE_ACC_PIPELINE=0 timeout -k 5 100 python -m jax_deepgemm bench --only dense --iters 20 --output "$OUT/tc_$name.json" \
      --shape 4096,7168,16384 --shape 4096,4096,7168 2>&1 | grep -E "^ +[0-9]" | sed "s/^/$name /" ;;
  esac
  DG_TUNE_ACC_PIPELINE=0 prof dense 4096,7168,16384 >"$OUT/tc_waits_$name.log"
  python tools/waits_summary.py <"$OUT/tc_waits_$name.log" | sed "s/^/$name: /"
done
cp /tmp/tc_orig.cuh "$header"
