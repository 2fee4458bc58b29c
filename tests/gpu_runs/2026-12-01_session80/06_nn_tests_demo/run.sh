#!/usr/bin/env bash
# HEAD (nn.route's and nn.expert_ffn's operand checks): the layer tests with the kernels (test_nn.py,
# test_moe_expert_parallel.py, test_nn_flax.py, test_nn_equinox.py, test_remat.py; 6 processes), then the demo.
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1; } | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -q -e . > "$OUT/logs/build.log" 2>&1 || { tail "$OUT/logs/build.log"; exit 1; }
export XLA_PYTHON_CLIENT_PREALLOCATE=false DG_JIT_CACHE_DIR=/tmp/jdg-cache
python -m pytest tests/test_nn.py tests/test_moe_expert_parallel.py tests/test_nn_flax.py tests/test_nn_equinox.py \
  tests/test_remat.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" > /tmp/ids.txt
split -n r/6 -d /tmp/ids.txt /tmp/ids_
for f in /tmp/ids_*; do
  ( mapfile -t c < "$f"; timeout -k 5 300 python -m pytest "${c[@]}" -q -rs -p no:cacheprovider \
      > "$OUT/logs/tests_${f##*_}.log" 2>&1 ) &
done; wait
echo "tests: $(wc -l < /tmp/ids.txt) cases"
for f in "$OUT"/logs/tests*.log; do echo "$(basename "$f"): $(tail -1 "$f")"; done
grep -h -E "^FAILED|^ERROR|default device|^SKIPPED" "$OUT"/logs/tests*.log | sort | uniq -c | head -20
unset XLA_PYTHON_CLIENT_PREALLOCATE
timeout -k 5 200 python -m jax_deepgemm demo 2>&1 | grep -v -i warning > "$OUT/demo.txt"
tail -14 "$OUT/demo.txt"
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
