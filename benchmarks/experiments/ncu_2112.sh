#!/usr/bin/env bash
# Nsight Compute, clocks left free, on 4096 x 2112 x 7168's 128 x 192 kernels on 118 CTAs without clusters (NOTES 80):
# DeepGEMM's (.dgprobe row 17, carried; built from its public source for measurement only), ours whole width
# (whole_wait_ahead.patch) and ours in half-width groups. Speed of light, warp states, pipes, memory tables.
#   bash benchmarks/experiments/ncu_2112.sh
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
git apply benchmarks/experiments/whole_wait_ahead.patch || exit 1
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
chmod +x .dgprobe/dg_dense_bench
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis
          --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --clock-control none)
profile() {  # name, kernel regex, command...
  local name=$1 regex=$2; shift 2
  timeout -k 5 120 "$NCU" -k "regex:$regex" -c 1 "${sections[@]}" -o "$OUT/$name" -f "$@" >"$OUT/$name.run.log" 2>&1
  "$NCU" --import "$OUT/$name.ncu-rep" --page details >"$OUT/$name.txt" 2>&1
  echo "== $name"; grep -E "Duration|SM Frequency|Elapsed Cycles|Throughput|Issued Ipc|Stall|Bank|Pipe|Eligible" \
    "$OUT/$name.txt" | head -40
}
profile dg sm90_fp8 ./.dgprobe/dg_dense_bench --rows 17 --iters 1 --warmup 0
export JDG_PROFILE_RUNS=1 JDG_PROFILE_SMS=118 DG_TUNE_CLUSTER=1 DG_JIT_CACHE_DIR=/tmp/ncu-cache
DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 DG_TUNE_SPLIT_HALVES=0 profile ours_whole jdg_fp8_gemm \
  python tools/profile_one.py dense 4096,2112,7168
profile ours_split jdg_fp8_gemm python tools/profile_one.py dense 4096,2112,7168
git apply -R benchmarks/experiments/whole_wait_ahead.patch
