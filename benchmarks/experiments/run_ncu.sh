#!/usr/bin/env bash
# Nsight Compute on one real kernel (default the 256 x 128 one of dense 4096 x 7168 x 16384, NOTES 16; any op and
# shape of tools/profile_one.py: run_ncu.sh k_grouped 4,4096,7168,8192): warp states (stall reasons), scheduler and
# pipe statistics, and per-SASS-instruction stall samples. Run after the build; the report and text pages go under
# $OUT/ncu_<op>_<shape> (ncu locks the clocks: compare shares, not times). JDG_NCU_SAMPLING: ncu's
# --warp-sampling-interval (0 samples every 2^5 cycles: more samples for short kernels; default auto).
set -uo pipefail
op="${1:-dense}" shape="${2:-4096,7168,16384}"
OUT="${OUT:-./gpu-out}/ncu_${op}_${shape//,/x}"
mkdir -p "$OUT"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
JDG_PROFILE_RUNS=1 DG_JIT_CACHE_DIR=/tmp/ncu-cache timeout -k 5 300 "$NCU" -k regex:jdg_fp8_gemm -c 1 \
  --section WarpStateStats --section SchedulerStats --section SourceCounters --section ComputeWorkloadAnalysis \
  --section SpeedOfLight --warp-sampling-interval "${JDG_NCU_SAMPLING:-auto}" -o "$OUT/ncu" -f python tools/profile_one.py "$op" "$shape" 2>&1 | tail -5
"$NCU" --import "$OUT/ncu.ncu-rep" --page details >"$OUT/ncu_details.txt" 2>&1
"$NCU" --import "$OUT/ncu.ncu-rep" --page source --csv --print-source sass >"$OUT/ncu_source_sass.csv" 2>&1
gzip -f "$OUT/ncu_source_sass.csv"
grep -E "Stall|Warp Cycles|Issued|Eligible|Active Warps|Tensor|Duration|SM Frequency|Throughput" "$OUT/ncu_details.txt" | head -60
