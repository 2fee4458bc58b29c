# session 57 call 4: the quantization kernel's variants (kernel times), then the tests and the demo on the current tree
export DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $OUT/machine.txt; cat $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
H=cuda/jax_deepgemm/fp8_quantize.cuh
cp $H /tmp/current.cuh
for v in C A B0 B; do
  cp .variants/$v.cuh $H
  echo "## variant $v" >> $OUT/variants.txt
  timeout 100 python benchmarks/experiments/transposed_cast.py all --no-xla 2>&1 | grep -v "^E[0-9]" >> $OUT/variants.txt
done
cp /tmp/current.cuh $H
cat $OUT/variants.txt
for files in "tcast tests/test_transposed_cast.py" "nn tests/test_nn.py tests/test_nn_equinox.py tests/test_nn_flax.py" \
             "remat tests/test_remat.py tests/test_batching.py" "export tests/test_export.py"; do
  set -- $files; name=$1; shift
  { timeout -k 5 300 python -I -m pytest "$@" -q -rs -p no:cacheprovider > $OUT/tests_$name.log 2>&1
    echo "$name: $(tail -1 $OUT/tests_$name.log)"; grep -E "^FAILED|^ERROR" $OUT/tests_$name.log | head -5; } &
done
wait
timeout -k 5 150 python -m jax_deepgemm demo 2>&1 | grep -v "^E[0-9]" > $OUT/demo.log; tail -14 $OUT/demo.log
