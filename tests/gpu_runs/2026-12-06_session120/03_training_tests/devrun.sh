set -u; export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
python -m jax_deepgemm info >> $OUT/machine.txt 2>&1
for files in "tcast tests/test_transposed_cast.py tests/test_cuda_lowering.py" \
             "nn tests/test_nn.py tests/test_remat.py" "batch tests/test_batching.py tests/test_moe_expert_parallel.py" \
             "qcompile tests/cuda/test_quantize_compile.py tests/test_nn_flax.py tests/test_nn_equinox.py"; do
  set -- $files; name=$1; shift
  { timeout -k 5 300 python -I -m pytest "$@" -q -rs -p no:cacheprovider -o faulthandler_timeout=240 2>&1 |
      grep -v -E "^E[0-9]{4} |Source Location Trace|cuda_status.cc" >"$OUT/tests_$name.log"
    echo "$name: $(tail -1 "$OUT/tests_$name.log")"; grep -E "^FAILED|^ERROR" "$OUT/tests_$name.log" | head -5; } &
done
wait
date -u >> $OUT/machine.txt
