#!/usr/bin/env bash
# Build and run the standalone FP8 GEMM GPU harness (tests/cuda/fp8_gemm_harness.cu) over a set of kernel
# configurations; prints PASS/FAIL per case and a summary line, exits non-zero on any failure.
#
#   bash tests/cuda/run_harness.sh            build what is missing or stale, then run (needs an sm_90 GPU)
#   bash tests/cuda/run_harness.sh --build    only build (works without a GPU)
#
# Binaries go to build/harness/ (git-ignored). They are rebuilt when the kernel or harness sources change (a hash
# of the sources is kept next to them), so binaries built on a CPU machine can be carried to the GPU machine.
# Every binary runs under `timeout` (a pipeline deadlock would otherwise hang), and is built with
# JDG_DEBUG_HANG_NS so that a barrier wait longer than 10 s traps inside the kernel.
set -u
cd "$(dirname "$0")/../.."
REPO=$(pwd)
OUT_DIR=build/harness
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT_DIR"

# name               N     K     BM  BN  ST AE BE ROW F32 C   M values (+ --bench for a rough timing)
CASES=$(cat <<'EOF'
main_2112x7168       2112  7168  128 128 6  0  0  0   0   0   1 64 130 257 --bench
bm64_bn112_cbf16     2112  7168  64  112 8  0  0  0   0   1   1 64 130 257
n130_k208_bn144_cf32 130   208   128 144 4  0  0  0   1   2   1 64 130 257
n16_k16_row          16    16    64  16  2  0  0  1   1   0   1 64 130 257
n16_k128_cbf16       16    128   128 16  3  0  0  0   0   1   1 64 130 257
n130_k7168_row160    130   7168  64  160 5  0  0  1   0   0   1 64 130 257
n2112_k208_row192    2112  208   128 192 3  0  0  1   0   2   1 64 130 257
n131_k128_odd_f32    131   128   64  48  4  0  0  0   1   1   1 64 130 257
n131_k208_odd_row    131   208   128 64  3  0  0  1   0   2   1 64 130 257
e5m2_a_2112x2048     2112  2048  128 112 5  1  0  0   0   0   1 130 257
e5m2_ab_row_f32      130   7168  64  128 4  1  1  1   1   2   1 64 257
bn256_2112x7168      2112  7168  128 256 3  0  0  0   0   0   1 130 257
bn240_3blocks        2112  512   64  240 4  0  0  0   1   0   1 64 130
bn208_7168x2048      7168  2048  128 208 4  0  0  0   0   0   130 2000
persist_4096x4096    4096  7168  128 128 7  0  0  0   0   0   4096 --bench
persist_m64_7168     7168  2048  64  96  8  0  0  0   0   1   64 1000 --bench
EOF
)

src_hash() { cat cuda/jax_deepgemm/*.h cuda/jax_deepgemm/*.cuh tests/cuda/fp8_gemm_harness.cu | sha256sum | cut -c1-16; }
HASH=$(src_hash)

build_one() {  # name N K BM BN ST AE BE ROW F32 C
  local name=$1 bin="$OUT_DIR/$1"
  if [[ -x "$bin" && -f "$bin.hash" && "$(cat "$bin.hash")" == "$HASH" ]] && ! ldd "$bin" 2>&1 | grep -q "not found"
  then return 0; fi
  if "$NVCC" -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -Xcompiler -fopenmp -I"$REPO/cuda" \
      -DJDG_N=$2 -DJDG_K=$3 -DJDG_BLOCK_M=$4 -DJDG_BLOCK_N=$5 -DJDG_STAGES=$6 -DJDG_A_E5M2=$7 -DJDG_B_E5M2=$8 \
      -DJDG_B_SCALE_PER_ROW=$9 -DJDG_OUT_F32=${10} -DJDG_C_KIND=${11} -DJDG_DEBUG_HANG_NS=10000000000ull \
      tests/cuda/fp8_gemm_harness.cu -o "$bin" >"$bin.buildlog" 2>&1; then
    echo "$HASH" >"$bin.hash"
    echo "built $name"
  else
    echo "BUILD FAIL $name"; cat "$bin.buildlog"; return 1
  fi
}
export -f build_one
export OUT_DIR NVCC REPO HASH

echo "$CASES" | awk '{print $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11}' |
  xargs -P "$JOBS" -L 1 bash -c 'build_one "$@"' _
build_status=$?
if [[ "${1:-}" == "--build" ]]; then exit $build_status; fi

echo "=== $(date -u +%Y-%m-%dT%H:%M:%SZ) $(git rev-parse --short HEAD 2>/dev/null) sources $HASH"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "(nvidia-smi not available)"

pass=0; fail=0
while read -r name n k bm bn st ae be row f32 c rest; do
  [[ -z "$name" ]] && continue
  bin="$OUT_DIR/$name"
  echo "--- $name"
  if [[ ! -x "$bin" ]]; then echo "FAIL $name (not built)"; fail=$((fail + 1)); continue; fi
  timeout 120 "$bin" $rest
  rc=$?
  if [[ $rc -eq 0 ]]; then echo "PASS $name"; pass=$((pass + 1));
  elif [[ $rc -eq 124 ]]; then echo "FAIL $name (timeout: hang?)"; fail=$((fail + 1));
  else echo "FAIL $name (exit $rc)"; fail=$((fail + 1)); fi
done <<<"$CASES"

# Out-of-bounds global accesses (scale and C reads, masked stores) under compute-sanitizer, on small odd shapes.
if command -v compute-sanitizer >/dev/null 2>&1; then
  for name in n131_k208_odd_row n131_k128_odd_f32 n130_k208_bn144_cf32; do
    echo "--- memcheck $name"
    if timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$OUT_DIR/$name" 1 130; then
      echo "PASS memcheck_$name"; pass=$((pass + 1))
    else echo "FAIL memcheck_$name"; fail=$((fail + 1)); fi
  done
fi

echo "harness: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
