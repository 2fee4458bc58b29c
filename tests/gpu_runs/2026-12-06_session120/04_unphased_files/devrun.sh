set -u; export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
python -m jax_deepgemm info >> $OUT/machine.txt 2>&1
for files in "ctl tests/test_control_flow.py" "modes tests/test_jax_modes.py" "swiglu tests/test_swiglu.py" \
             "misc tests/test_sass_hints.py tests/test_typing.py tests/test_warmup.py"; do
  set -- $files; name=$1; shift
  { timeout -k 5 330 python -I -m pytest "$@" -q -rs -p no:cacheprovider -o faulthandler_timeout=240 2>&1 |
      grep -v -E "^E[0-9]{4} |Source Location Trace|cuda_status.cc" >"$OUT/tests_$name.log"
    echo "$name: $(tail -1 "$OUT/tests_$name.log")"; grep -E "^FAILED|^ERROR" "$OUT/tests_$name.log" | head -5; } &
done
wait
date -u >> $OUT/machine.txt
