#!/usr/bin/env bash
# Where the transposing quantization kernel's ~1.02 ms of the MoE step goes, and how far it is from HBM's rate: its
# bf16 cases (transposed_cast.py), XLA's plain element-wise kernels as ceilings (quantize_bandwidth.py), the MoE
# step's launches in order (step_kernels.py --sequence), and Nsight Compute on one both-layouts call.
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -q -e . > "$OUT/logs/build.log" 2>&1 || { tail "$OUT/logs/build.log"; exit 1; }
cd benchmarks/experiments
timeout -k 5 150 python transposed_cast.py bf16 --no-xla 2>&1 | grep -v -i warning | tee "$OUT/cases.txt"
timeout -k 5 100 python quantize_bandwidth.py 2>&1 | grep -v -i warning | tee "$OUT/ceilings.txt"
mkdir -p "$OUT/logs/seq"
timeout -k 5 120 python step_kernels.py --sequence "$OUT/logs/seq" moe_x_bf16 > "$OUT/logs/step.txt" 2>&1
grep -E "jdg_fp8_quantize" "$OUT/logs/step.txt" | head -40 | tee "$OUT/step_quantize.txt"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout -k 5 150 "$ncu" -k regex:jdg_fp8_quantize_t -c 1 --section SpeedOfLight --section Occupancy \
  --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
  python quantize_bandwidth.py one > "$OUT/ncu.txt" 2>&1
grep -E "DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Stall|L2 Hit|Mem Busy|Max Bandwidth" "$OUT/ncu.txt" | head -40
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
