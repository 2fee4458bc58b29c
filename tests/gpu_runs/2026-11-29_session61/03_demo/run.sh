export OUT PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
cp "$0" $OUT/run.sh 2>/dev/null
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
XLA_PYTHON_CLIENT_PREALLOCATE=true timeout -k 5 150 python -m jax_deepgemm demo > $OUT/demo.log 2>&1; tail -12 $OUT/demo.log
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout -k 5 150 $CS --tool memcheck --error-exitcode 9 python -I -m pytest -q -p no:cacheprovider tests/test_gpu_grouped.py -k "k_grouped_hostile or k_grouped_bf16_out" > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|passed|failed" $OUT/memcheck.log | tail -3
date -u >> $OUT/machine.txt
