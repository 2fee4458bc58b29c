#!/usr/bin/env bash
# The token-major quantization's scales stored [row blocks, columns] (HEAD) against [columns, row blocks] (77b564e):
# both packages with pip --target; the new lowering test with each (it should fail with the old one); the bf16
# cases of transposed_cast.py; the MoE and MLP steps, old / new, two rounds; then HEAD installed editable and the
# GPU tests of test_transposed_cast.py, test_differentiable.py, test_nn.py, test_remat.py (8 processes).
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
R=$PWD
python -m pip uninstall -y -q jax_deepgemm > /dev/null 2>&1
pip_target() { python -m pip install -q --no-build-isolation --no-deps --target "$@"; }
pip_target /tmp/pkg_new . > "$OUT/logs/build_new.log" 2>&1 &
pip_target /tmp/pkg_old .abtrees/77b564e > "$OUT/logs/build_old.log" 2>&1 &
wait
side() {  # side, then a command run with that package first on the path
  local s=$1; shift
  ( cd /tmp; export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_$s:$R/benchmarks/experiments
    python -c "import jax_deepgemm as j; assert j.__file__.startswith('/tmp/pkg_$s'), j.__file__" || exit 1
    "$@" )
}
for s in old new; do
  side $s timeout -k 5 120 python -m pytest $R/tests/test_transposed_cast.py -k reach_the_gemms -q -p no:cacheprovider \
    2>&1 | grep -E "passed|failed|scale_moves|AssertionError" | head -5 | sed "s/^/$s test: /" | tee -a "$OUT/test_ab.txt"
done
for s in old new; do
  side $s timeout -k 5 150 python $R/benchmarks/experiments/transposed_cast.py bf16 --no-xla 2>&1 | grep -v -i warning |
    grep -E "groups|dense" | sed "s/^/$s /" | tee -a "$OUT/cases.txt"
done
for round in 1 2; do
  for s in old new; do
    side $s timeout -k 5 150 python $R/benchmarks/experiments/step_kernels.py moe_x_bf16 mlp 2>&1 | grep -v -i warning |
      grep -E "us of kernels|jdg_|transpose" | sed "s/^/$s r$round /" >> "$OUT/steps.txt"
  done
done
grep -E "us of kernels" "$OUT/steps.txt"
python -m pip install --no-build-isolation -q -e . > "$OUT/logs/build_e.log" 2>&1 || { tail "$OUT/logs/build_e.log"; exit 1; }
export XLA_PYTHON_CLIENT_PREALLOCATE=false
python -m pytest tests/test_transposed_cast.py tests/test_differentiable.py tests/test_nn.py tests/test_remat.py \
  --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" > /tmp/ids.txt
split -n r/8 -d /tmp/ids.txt /tmp/ids_
for f in /tmp/ids_*; do
  ( mapfile -t c < "$f"; timeout -k 5 280 python -m pytest "${c[@]}" -q -rs -p no:cacheprovider \
      > "$OUT/logs/tests_${f##*_}.log" 2>&1 ) &
done; wait
echo "tests: $(wc -l < /tmp/ids.txt) cases"
for f in "$OUT"/logs/tests*.log; do echo "$(basename "$f"): $(tail -1 "$f")"; done
grep -h -E "^FAILED|^ERROR|default device" "$OUT"/logs/tests*.log | sort | uniq -c | head -20
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
