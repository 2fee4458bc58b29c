#!/usr/bin/env bash
# NOTES 18: dense clusters of 2 over an odd N-block count, the last N block's tiles paired along M without multicast
# (fp8_gemm.cuh, kLoneColumn). One device call, from the repo root: build; same-run bench of odd-N shapes with
# clusters off / on (two rounds; 128 x 192 tiles, DeepGEMM's pick for 4096 x 2112 x 7168, once each); the
# forced-cluster dense GPU config tests and the whole dense GPU file with clusters forced on.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
shapes=(--shape 4096,2112,7168 --shape 2048,2112,7168 --shape 4096,2112,2048 --shape 6144,2112,7168)
bench() {  # label, then env assignments
  local label=$1; shift
  env "$@" DG_JIT_CACHE_DIR="/tmp/lone-$label" timeout -k 5 100 python -m jax_deepgemm bench --only dense --iters 30 \
    --output "$OUT/lone_$label.json" "${shapes[@]}" 2>&1 | grep -E "^ +[0-9]" | sed "s/^/$label /"
}
{
  for round in 1 2; do
    bench "cl1_r$round" DG_TUNE_CLUSTER=1
    bench "cl2_r$round" DG_TUNE_CLUSTER=2
  done
  bench 128x192_cl1 DG_TUNE_CLUSTER=1 DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192
  bench 128x192_cl2 DG_TUNE_CLUSTER=2 DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192
} | tee "$OUT/lone_bench.txt"
timeout -k 5 150 python -I -m pytest tests/test_gpu_configs.py -q -rs -p no:cacheprovider -k "x2 and dense" 2>&1 |
  tail -4 | tee "$OUT/lone_config_tests.txt"
DG_TUNE_CLUSTER=2 timeout -k 5 150 python -I -m pytest tests/test_gpu_dense.py -q -rs -p no:cacheprovider 2>&1 |
  tail -4 | tee "$OUT/lone_dense_tests.txt"
