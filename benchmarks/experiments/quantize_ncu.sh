#!/usr/bin/env bash
# Where the MoE step's quantization kernels spend their time (NOTES 128): one step's launches in order with their
# times (step_kernels.py --sequence); Nsight Compute's time, instruction and DRAM counts of every quantization launch
# of one step; then the executed instructions per SASS line of the first bf16 transposing launch (source page, with
# its warp stall samples) and of the first rowwise one.
. "$(dirname "$0")/prelude.sh"
build
timeout -k 5 150 python benchmarks/experiments/step_kernels.py --sequence "$OUT" moe_x_bf16 2>&1 |
  grep -E "us of kernels|launch order|jdg_|fusion|gemm" > "$OUT/sequence.txt"
rm -f "$OUT"/*.hlo.txt
grep -c . "$OUT/sequence.txt"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
METRICS=gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum
METRICS=$METRICS,sm__inst_executed.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
METRICS=$METRICS,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__grid_size
timeout -k 5 200 "$NCU" -k regex:"jdg_fp8_quantize" -c 40 --clock-control none --metrics "$METRICS" \
  python benchmarks/experiments/moe_step_once.py 2>&1 | grep -E "jdg_|gpu__|sm__|dram__|launch__|rror" > "$OUT/ncu.txt"
grep -c jdg_ "$OUT/ncu.txt"
for k in jdg_fp8_quantize_t_bf16 jdg_fp8_quantize_rows; do
  timeout -k 5 200 "$NCU" -k regex:"$k" -c 1 --section SourceCounters --section WarpStateStats \
    --section InstructionStats -o "$OUT/src_$k" -f python benchmarks/experiments/moe_step_once.py 2>&1 | tail -2
  "$NCU" --import "$OUT/src_$k.ncu-rep" --page source --csv --print-source sass >"$OUT/src_$k.csv" 2>&1
  "$NCU" --import "$OUT/src_$k.ncu-rep" --page details >"$OUT/details_$k.txt" 2>&1
  gzip -f "$OUT/src_$k.csv"
done
date -u
