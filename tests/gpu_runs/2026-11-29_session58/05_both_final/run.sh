# session 58 call 5: the untransposed output from byte transposes of the column words (80 registers for float32, no
# bound), only where the dgrad runs (symbolic zeros): tests, kernel times, the MoE / MLP steps, the demo
export DG_JIT_CACHE_DIR=/tmp/jdg-cache PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $OUT/machine.txt; cat $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
for files in "tcast tests/test_transposed_cast.py tests/test_cuda_lowering.py" "diff tests/test_differentiable.py" \
             "nn tests/test_nn.py tests/test_remat.py tests/test_batching.py" "export tests/test_export.py tests/cuda/test_quantize_compile.py"; do
  set -- $files; name=$1; shift
  { XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 240 python -I -m pytest "$@" -q -rs -p no:cacheprovider > $OUT/tests_$name.log 2>&1
    echo "$name: $(tail -1 $OUT/tests_$name.log)"; grep -E "^FAILED|^ERROR" $OUT/tests_$name.log | head -5; } &
done
wait
date -u
timeout -k 5 150 python benchmarks/experiments/transposed_cast.py all --no-xla 2>&1 | grep -v "^E[0-9]" > $OUT/cast.txt; cat $OUT/cast.txt
date -u
(cd benchmarks/experiments && timeout -k 5 120 python step_kernels.py moe mlp 2>&1 | grep -v "^E[0-9]" > $OUT/step_kernels.txt); grep -E "^(moe|mlp)|quantize|transpose" $OUT/step_kernels.txt
date -u
timeout -k 5 150 python -m jax_deepgemm demo 2>&1 | grep -v "^E[0-9]" > $OUT/demo.log; tail -3 $OUT/demo.log
date -u
