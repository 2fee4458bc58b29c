#!/usr/bin/env bash
# The router's product as BF16_BF16_F32_X6 (46c79a3) against HIGHEST (3e026be): the MoE step (step_kernels.py
# moe_x_bf16), old / new, two rounds, both packages installed with pip --target; then the new package installed
# editable and the GPU tests of test_nn.py and test_moe_expert_parallel.py (4 processes).
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
R=$PWD
pip_target() { python -m pip install -q --no-build-isolation --no-deps --target "$@"; }
pip_target /tmp/pkg_new . > "$OUT/logs/build_new.log" 2>&1 &
pip_target /tmp/pkg_old .abtrees/3e026be > "$OUT/logs/build_old.log" 2>&1 &
wait
for round in 1 2; do
  for s in old new; do
    ( cd /tmp && PYTHONPATH=/tmp/pkg_$s:$R/benchmarks/experiments DG_JIT_CACHE_DIR=/tmp/c_$s timeout -k 5 100 \
        python $R/benchmarks/experiments/step_kernels.py moe_x_bf16 2>&1 | grep -v -i warning | head -14 |
        sed "s/^/$s r$round /" >> "$OUT/steps.txt" )
  done
done
grep -E "us of kernels|gemm_fusion" "$OUT/steps.txt"
python -m pip install --no-build-isolation -q -e . > "$OUT/logs/build_e.log" 2>&1 || { tail "$OUT/logs/build_e.log"; exit 1; }
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
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
