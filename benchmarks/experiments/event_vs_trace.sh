#!/usr/bin/env bash
# How much the .dgprobe launchers' CUDA events add to DeepGEMM's kernel times (NOTES 78): each launcher once under
# Nsight Systems (else Nsight Compute, clocks and caches left alone), its event times set against the traced kernel
# durations of the same launches (event_vs_trace.py). The table times our kernels by their traced durations, so this
# says how far the same-call ratios of dg_same_call.sh lean. Where Nsight Compute runs, our rows then run under it
# too (ncu_ours.py: the same duration metric, clocks and caches alike). From the repo root, .dgprobe carried:
#   bash benchmarks/experiments/event_vs_trace.sh
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for bin in dg_grouped_bench dg_bench; do
  if [ -n "$NSYS" ]; then
    timeout -k 5 180 "$NSYS" profile --trace=cuda --sample=none --cpuctxsw=none --force-overwrite=true \
      -o "/tmp/$bin" "./.dgprobe/$bin" >"$OUT/$bin.stdout" 2>"$OUT/$bin.stderr"
    "$NSYS" stats -r cuda_gpu_trace -f csv -o "/tmp/${bin}_trace" --force-overwrite=true "/tmp/$bin.nsys-rep" \
      >/dev/null 2>>"$OUT/$bin.stderr"
    cp /tmp/"${bin}"_trace*.csv "$OUT/$bin.trace.csv"
  elif [ -n "$NCU" ]; then
    timeout -k 5 240 "$NCU" --csv --metrics gpu__time_duration.sum --clock-control none --cache-control none \
      -k regex:fp8 --log-file "$OUT/$bin.trace.csv" "./.dgprobe/$bin" >"$OUT/$bin.stdout" 2>"$OUT/$bin.stderr"
  else
    echo "neither nsys nor ncu here"; exit 1
  fi
  echo "## $bin (${NSYS:+nsys}${NSYS:-ncu})"
  python3 benchmarks/experiments/event_vs_trace.py "$OUT/$bin.stdout" "$OUT/$bin.trace.csv" || tail -5 "$OUT/$bin.stderr"
done | tee "$OUT/event_vs_trace.txt"
if [ -z "$NSYS" ] && [ -n "$NCU" ]; then
  python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
  export XLA_PYTHON_CLIENT_PREALLOCATE=false DG_JIT_CACHE_DIR=/tmp/jdg-cache-ncu
  for rows in "grouped_rows.py contiguous masked" "dense_rows.py 4096,7168,16384 4096,4096,7168 4096,7168,2048"; do
    name=${rows%%_*}
    # shellcheck disable=SC2086  # the rows script and its arguments are words
    timeout -k 5 240 "$NCU" --csv --metrics gpu__time_duration.sum --clock-control none --cache-control none \
      -k regex:jdg_fp8 --log-file "$OUT/ours_$name.trace.csv" python benchmarks/experiments/ncu_ours.py $rows \
      >"$OUT/ours_$name.stdout" 2>"$OUT/ours_$name.stderr"
    python benchmarks/experiments/ncu_ours.py --durations "$OUT/ours_$name.trace.csv" "$OUT/ours_$name.stdout" ||
      tail -5 "$OUT/ours_$name.stderr"
  done | tee -a "$OUT/event_vs_trace.txt"
fi
gzip -f "$OUT"/*.trace.csv
