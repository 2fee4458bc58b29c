#!/usr/bin/env bash
# Per-warpgroup TMA-store epilogue (NOTES 31): same-run A/B of the working tree's kernel against the same kernel with
# the epilogue joint over both consumer warpgroups (one named barrier, one issuing thread, as before; the sed below
# flips the AB-only constant), kernel time only, alternating. Then the GPU tests of the TMA-store paths.
# On an H200 it first runs the split-K A/B of NOTES 30 (hbm_split.sh's rows, without its tests).
# One device call; logs under $OUT.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
start=$SECONDS
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git rev-parse HEAD; } | tee "$OUT/machine.txt"
python -m jax_deepgemm info 2>&1 | grep -E "kernels:|GB/s" | tee -a "$OUT/machine.txt"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  shapes="64,4096,7168 128,4096,7168 256,2112,7168 128,4096,4096 192,2112,7168 64,4096,4096"
  for round in 1 2; do for sk in 1 default; do
    if [ $sk = 1 ]; then export DG_TUNE_SPLIT_K=1; else unset DG_TUNE_SPLIT_K; fi
    DG_PRINT_CONFIGS=1 DG_JIT_CACHE_DIR=/tmp/hbm-cache-$sk timeout -k 5 120 python benchmarks/experiments/dense_rows.py \
      $shapes 2>&1 | grep -E " us |jax_deepgemm: fp8_gemm" | sed "s/^/sk=$sk r$round /"
  done; done | tee "$OUT/hbm_split.txt"
  unset DG_TUNE_SPLIT_K
fi
echo "after split A/B: $((SECONDS - start)) s" | tee -a "$OUT/machine.txt"
rm -rf /tmp/ab_new_cuda /tmp/ab_old_cuda && cp -r cuda /tmp/ab_new_cuda && cp -r cuda /tmp/ab_old_cuda
sed -i 's/kJointEpilogueAB = false;/kJointEpilogueAB = true;/' /tmp/ab_old_cuda/jax_deepgemm/fp8_gemm.cuh
grep -c 'kJointEpilogueAB = true;' /tmp/ab_old_cuda/jax_deepgemm/fp8_gemm.cuh >"$OUT/old_variant_check.txt"
dense="4096,2112,7168 4096,24576,1536 4096,32768,512 4096,7168,16384 4096,4096,7168 4096,7168,2048 2048,7168,2048 256,7168,2048"
for round in 1 2; do for v in new old; do
  rm -rf cuda && cp -r /tmp/ab_${v}_cuda cuda
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 100 python benchmarks/experiments/dense_rows.py $dense 2>&1 |
    grep -E " us " | sed "s/^/$v r$round /"
done; done | tee "$OUT/ab_dense.txt"
for v in new old; do
  rm -rf cuda && cp -r /tmp/ab_${v}_cuda cuda
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 120 python benchmarks/experiments/grouped_rows.py contiguous masked 2>&1 |
    grep -E " us " | sed "s/^/$v /"
done | tee "$OUT/ab_grouped.txt"
rm -rf cuda && cp -r /tmp/ab_new_cuda cuda
echo "after A/B: $((SECONDS - start)) s" | tee -a "$OUT/machine.txt"
left=$((575 - (SECONDS - start)))
[ $left -gt 60 ] || exit 0
timeout -k 5 $left python -I -m pytest tests/test_gpu_dense.py -q -rs -p no:cacheprovider -x 2>&1 |
  grep -v -E "^E[0-9]{4} |^$" >"$OUT/tests_dense.log" &
timeout -k 5 $left python -I -m pytest tests/test_gpu_configs.py -k tma_store -q -rs -p no:cacheprovider 2>&1 |
  grep -v -E "^E[0-9]{4} |^$" >"$OUT/tests_tma_store.log" &
wait
tail -2 "$OUT/tests_dense.log" "$OUT/tests_tma_store.log"
