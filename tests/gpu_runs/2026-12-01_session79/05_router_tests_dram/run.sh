#!/usr/bin/env bash
# 46c79a3's GPU tests again (test_nn.py, test_moe_expert_parallel.py; call 4's fourth process had no memory: XLA's
# preallocation, now off), and Nsight Compute's DRAM / L2 byte counts of four quantization kernels (quantize_dram.py).
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -q -e . > "$OUT/logs/build_e.log" 2>&1 || { tail "$OUT/logs/build_e.log"; exit 1; }
export XLA_PYTHON_CLIENT_PREALLOCATE=false
python -m pytest tests/test_nn.py tests/test_moe_expert_parallel.py --collect-only -q -p no:cacheprovider 2>/dev/null |
  grep "::" > /tmp/ids.txt
split -n r/4 -d /tmp/ids.txt /tmp/ids_
for f in /tmp/ids_*; do
  ( mapfile -t c < "$f"; timeout -k 5 300 python -m pytest "${c[@]}" -q -rs -p no:cacheprovider \
      > "$OUT/logs/tests_${f##*_}.log" 2>&1 ) &
done; wait
echo "tests: $(wc -l < /tmp/ids.txt) cases"
for f in "$OUT"/logs/tests*.log; do echo "$(basename "$f"): $(tail -1 "$f")"; done
grep -h -E "^FAILED|^ERROR|default device" "$OUT"/logs/tests*.log | sort | uniq -c | head -20
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout -k 5 200 "$ncu" -k regex:jdg_fp8_quantize --metrics \
  gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum \
  python benchmarks/experiments/quantize_dram.py > "$OUT/ncu.txt" 2>&1
grep -E "^(w|x) \[|jdg_fp8|duration|bytes|sectors|requests" "$OUT/ncu.txt" | head -60
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
