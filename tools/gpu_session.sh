#!/usr/bin/env bash
# One GPU-machine session: build in place, report the machine, run the GPU tests, the demo and the compile timings,
# keeping every log under $OUT (the device tool's result folder; ./gpu-out when run elsewhere).
# Usage: bash tools/gpu_session.sh [pytest selection, default: tests]
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR="${DG_JIT_CACHE_DIR:-/tmp/jdg-cache}"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; git log -1 --oneline 2>/dev/null || true; } 2>&1 | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
python -m jax_deepgemm info 2>&1 | tee -a "$OUT/machine.txt"
# Cold compile, then cache hits, of the kernels a few DeepSeek shapes select.
rm -rf "$DG_JIT_CACHE_DIR"
shapes=(--gemm 64,2112,7168 --gemm 128,24576,1536 --gemm 4096,7168,2048 --gemm 4096,4096,7168)
{ echo "# cold"; python -m jax_deepgemm warmup "${shapes[@]}"; echo "# cache hit (new process: disk)";
  python -m jax_deepgemm warmup "${shapes[@]}"; } 2>&1 | tee "$OUT/compile_times.txt"
timeout 900 python -m pytest "${@:-tests}" -q -x -rs 2>&1 | tee "$OUT/tests.log"
timeout 300 python -m jax_deepgemm demo 2>&1 | tee "$OUT/demo.log"
