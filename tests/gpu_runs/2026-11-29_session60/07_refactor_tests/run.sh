export OUT PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
cp "$0" $OUT/run.sh 2>/dev/null
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
for files in "lowering tests/test_cuda_lowering.py tests/test_remat.py" "diff tests/test_differentiable.py" \
             "nn tests/test_nn.py tests/test_batching.py tests/test_moe_expert_parallel.py tests/test_nn_flax.py tests/test_nn_equinox.py"; do
  set -- $files; name=$1; shift
  { timeout -k 5 230 python -I -m pytest "$@" -q -rs -p no:cacheprovider > "$OUT/tests_$name.log" 2>&1
    echo "$name: $(tail -1 "$OUT/tests_$name.log")"; grep -E "^FAILED|^ERROR" "$OUT/tests_$name.log" | head -5; } &
done
wait
date -u >> $OUT/machine.txt
