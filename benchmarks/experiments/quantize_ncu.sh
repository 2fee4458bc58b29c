#!/usr/bin/env bash
# Where the MoE step's quantization time goes (NOTES 128): one step's launches in order with their times
# (step_kernels.py --sequence); then Nsight Compute on one call of the transposing kernel in the step's two slowest
# activation forms (transposed_cast.py's cases: x through the gather, d(gate_up) by groups): speed of light,
# occupancy, warp states, and executed instructions and stall samples per SASS line (the source page, as CSV).
# (Profiling the whole jitted step instead did not finish in 200 s per ncu run, session 83: keep ncu on small scripts.)
# Session 84 (NOTES 129): the first case came back; the second did not finish before the call's 420 s limit.
. "$(dirname "$0")/prelude.sh"
build
timeout -k 5 150 python benchmarks/experiments/step_kernels.py --sequence "$OUT" moe_x_bf16 2>&1 |
  grep -E "us of kernels|launch order|jdg_|fusion|gemm" > "$OUT/sequence.txt"
rm -f "$OUT"/*.hlo.txt
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
n=0
for case in "x [4096, 7168] bf16 through the gather" "grad_gate_up [16384, 4096] bf16, groups"; do
  n=$((n + 1))
  timeout -k 5 150 "$NCU" -k regex:jdg_fp8_quantize_t -c 1 --section SpeedOfLight --section Occupancy \
    --section SourceCounters --section WarpStateStats --section InstructionStats -o "$OUT/case$n" -f \
    python benchmarks/experiments/transposed_cast.py "$case" --no-xla 2>&1 | grep -E "^(x|grad)|rror" | tail -3
  "$NCU" --import "$OUT/case$n.ncu-rep" --page details >"$OUT/details_case$n.txt" 2>&1
  "$NCU" --import "$OUT/case$n.ncu-rep" --page source --csv --print-source sass >"$OUT/source_case$n.csv" 2>&1
  gzip -f "$OUT/source_case$n.csv"
  grep -E "Duration|Throughput|Executed Ipc|Achieved Occupancy|Registers|Stall" "$OUT/details_case$n.txt" | head -30
done
date -u
