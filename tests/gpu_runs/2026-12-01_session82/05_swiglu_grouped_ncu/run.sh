#!/usr/bin/env bash
# Why the grouped SwiGLU backward (NOTES 127) runs slower than the two kernels it replaces: Nsight Compute's
# occupancy, instruction and DRAM counts of one call of each (the SwiGLU kernel and the transposing quantization of
# d(gate_up); the grouped kernel), swiglu_grouped.py with PROFILE_ONCE=1.
. "$(dirname "$0")/prelude.sh"
build
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
METRICS=gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum
METRICS=$METRICS,sm__inst_executed.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
METRICS=$METRICS,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__grid_size
PROFILE_ONCE=1 timeout -k 5 200 "$NCU" -k regex:"jdg_(swiglu|fp8_quantize_t)" -c 3 --clock-control none \
  --metrics "$METRICS" python benchmarks/experiments/swiglu_grouped.py 2>&1 |
  grep -E "jdg_|gpu__|sm__|dram__|launch__|rror" | tee "$OUT/ncu.txt"
date -u
