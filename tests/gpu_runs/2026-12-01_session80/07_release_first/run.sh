#!/usr/bin/env bash
# A two-wave tile whose last wave is empty releases each stage before waiting for the next (new, the working tree)
# against 97ab020 (old): ragged_tail_cost.py, the masked and contiguous / ragged table rows (grouped_rows.py), the
# MoE step, old / new, one run each; then the new package's GPU tests: test_gpu_grouped.py, test_gpu_dense.py, the ragged and
# masked forced configurations of test_gpu_configs.py and test_hostile_data.py with the kernels (14 processes).
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
source tools/ab_side.sh
ab_install new . old .abtrees/97ab020
for s in old new; do
  side $s timeout -k 5 100 python $R/benchmarks/experiments/ragged_tail_cost.py 2>&1 | grep "^round" |
    sed "s/^/$s /" | tee -a "$OUT/tail_cost.txt"
done
for s in old new; do
  side $s timeout -k 5 80 python $R/benchmarks/experiments/grouped_rows.py masked contiguous 2>&1 |
    grep -v -i warning | sed "s/^/$s /" >> "$OUT/grouped_rows.txt"
done
for s in old new; do
  side $s timeout -k 5 100 python $R/benchmarks/experiments/step_kernels.py moe_x_bf16 2>&1 | grep -v -i warning |
    grep -E "us of kernels|jdg_" | sed "s/^/$s /" >> "$OUT/steps.txt"
done
grep -E "us of kernels" "$OUT/steps.txt"
date -u
export XLA_PYTHON_CLIENT_PREALLOCATE=false
T=(--rootdir=$R -q -p no:cacheprovider)
{ side new python -m pytest $R/tests/test_gpu_configs.py -k "ragged or masked" --collect-only "${T[@]}"
  side new python -m pytest $R/tests/test_gpu_grouped.py $R/tests/test_gpu_dense.py $R/tests/test_hostile_data.py \
    --collect-only "${T[@]}"; } 2>/dev/null | grep "::" > /tmp/ids.txt
split -n r/14 -d /tmp/ids.txt /tmp/ids_
for f in /tmp/ids_*; do
  ( mapfile -t c < "$f"
    side new timeout -k 5 230 python -m pytest "${c[@]/#/$R/}" -rs "${T[@]}" > "$OUT/logs/tests_${f##*_}.log" 2>&1 ) &
done; wait
echo "tests: $(wc -l < /tmp/ids.txt) cases"
for f in "$OUT"/logs/tests*.log; do echo "$(basename "$f"): $(tail -n 1 "$f")"; done
grep -h -E "^FAILED|^ERROR|default device" "$OUT"/logs/tests*.log | sort | uniq -c | head -20
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
