#!/usr/bin/env bash
# The grouped SwiGLU backward (NOTES 127): the sent tree ("new") against 423efd4 ("old", .abtrees/423efd4, carried),
# both with pip --target. swiglu_grouped.py's two forms with the new package (bits compared); the MoE step's kernels
# (step_kernels.py moe_x_bf16), old / new, two rounds; then the sent tree installed editable and the GPU tests of
# test_swiglu.py, test_transposed_cast.py, test_nn.py, test_remat.py, test_moe_expert_parallel.py,
# test_differentiable.py and test_hostile_data.py (8 processes); then the demo.
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
ab_install new . old .abtrees/423efd4
side new timeout -k 5 150 python $R/benchmarks/experiments/swiglu_grouped.py 2>&1 | grep -v -i warning |
  tee "$OUT/forms.txt"
for round in 1 2; do
  for s in old new; do
    side $s timeout -k 5 150 python $R/benchmarks/experiments/step_kernels.py moe_x_bf16 2>&1 | grep -v -i warning |
      grep -E "us of kernels|jdg_|fusion" | sed "s/^/$s r$round /" >> "$OUT/steps.txt"
  done
done
grep -E "us of kernels" "$OUT/steps.txt"
build
mkdir -p "$OUT/logs"
python -m pytest tests/test_swiglu.py tests/test_transposed_cast.py tests/test_nn.py tests/test_remat.py \
  tests/test_moe_expert_parallel.py tests/test_differentiable.py tests/test_hostile_data.py --collect-only -q \
  -p no:cacheprovider 2>/dev/null | grep "::" > /tmp/ids.txt
split -n r/8 -d /tmp/ids.txt /tmp/ids_
for f in /tmp/ids_*; do
  ( mapfile -t c < "$f"; timeout -k 5 240 python -m pytest "${c[@]}" -q -rs -p no:cacheprovider \
      > "$OUT/logs/tests_${f##*_}.log" 2>&1 ) &
done; wait
echo "tests: $(wc -l < /tmp/ids.txt) cases"
for f in "$OUT"/logs/tests*.log; do echo "$(basename "$f"): $(tail -1 "$f")"; done
grep -h -E "^FAILED|^ERROR|default device" "$OUT"/logs/tests*.log | sort | uniq -c | head -20
unset XLA_PYTHON_CLIENT_PREALLOCATE
timeout -k 5 150 python -m jax_deepgemm demo 2>&1 | grep -v -i warning > "$OUT/demo.txt"
tail -14 "$OUT/demo.txt"
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
