#!/usr/bin/env bash
# Would a fourth stage pay on long-K 256 x 128 tiles (NOTES 31)? Timing only, results wrong: the kernel without any
# epilogue (tile_overhead.sh's "noepi") with the TMA store's 3 stages (DG_TUNE_TMA_STORE unset) against 4 stages
# (DG_TUNE_TMA_STORE=0: no staging tile, so one more stage fits), alternating; the real kernel's two epilogues too.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_PRINT_CONFIGS=1
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
rm -rf /tmp/v_* && cp -r cuda /tmp/v_asis && cp -r cuda /tmp/v_noepi
python benchmarks/experiments/noepi_variant.py /tmp/v_noepi
shapes="4096,7168,16384 4096,4096,16384 4096,7168,7168 4096,7168,2048"
for round in 1 2; do for v in noepi asis; do for ts in default 0; do
  rm -rf cuda && cp -r /tmp/v_$v cuda
  if [ $ts = 0 ]; then export DG_TUNE_TMA_STORE=0; else unset DG_TUNE_TMA_STORE; fi
  DG_JIT_CACHE_DIR=/tmp/c_${v}_$ts timeout -k 5 100 python benchmarks/experiments/dense_rows.py $shapes 2>&1 |
    grep -E " us |rror|jax_deepgemm: fp8" | sed -E "s/^/$v tma_store=$ts r$round /; s/num_sms.*-> //; s/threads.*tma_store=/tma_store=/; s/ acc_pipeline.*//"
done; done; done | tee "$OUT/stage4.txt"
rm -rf cuda && cp -r /tmp/v_asis cuda
