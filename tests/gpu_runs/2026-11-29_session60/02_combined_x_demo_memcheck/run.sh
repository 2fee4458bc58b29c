export OUT PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
cp "$0" $OUT/run.sh 2>/dev/null
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
(cd benchmarks/experiments && XLA_PYTHON_CLIENT_PREALLOCATE=true timeout -k 5 150 python step_kernels.py moe_x moe_x_weights_after moe > $OUT/step_kernels.txt 2>&1)
grep -E "^(moe|mlp)" $OUT/step_kernels.txt
XLA_PYTHON_CLIENT_PREALLOCATE=true timeout -k 5 180 python -m jax_deepgemm demo > $OUT/demo.log 2>&1; tail -3 $OUT/demo.log
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout -k 5 200 $CS --tool memcheck --error-exitcode 9 python -I -m pytest -q -p no:cacheprovider tests/test_differentiable.py -k "combined_ragged_dot_equals" > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|passed|failed" $OUT/memcheck.log | tail -3
date -u >> $OUT/machine.txt
