# session 58 call 2: ragged_dot with the quantization kernel: tests, the MoE step, the demo; memcheck of the kernel
export DG_JIT_CACHE_DIR=/tmp/jdg-cache PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; } > $OUT/machine.txt; cat $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
for files in "tcast tests/test_transposed_cast.py tests/test_cuda_lowering.py" "diff tests/test_differentiable.py" \
             "nn tests/test_nn.py tests/test_remat.py tests/test_batching.py" "export tests/test_export.py"; do
  set -- $files; name=$1; shift
  { XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 240 python -I -m pytest "$@" -q -rs -p no:cacheprovider > $OUT/tests_$name.log 2>&1
    echo "$name: $(tail -1 $OUT/tests_$name.log)"; grep -E "^FAILED|^ERROR" $OUT/tests_$name.log | head -5; } &
done
wait
date -u
(cd benchmarks/experiments && timeout -k 5 120 python step_kernels.py moe mlp 2>&1 | grep -v "^E[0-9]" > $OUT/step_kernels.txt); head -12 $OUT/step_kernels.txt
date -u
timeout -k 5 150 python -m jax_deepgemm demo 2>&1 | grep -v "^E[0-9]" > $OUT/demo.log; tail -14 $OUT/demo.log
date -u
JDG_SANITIZE_FILES=tests/test_transposed_cast.py JDG_SANITIZE_K="not bad" JDG_SANITIZE_LIMIT=120 bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -5
date -u
