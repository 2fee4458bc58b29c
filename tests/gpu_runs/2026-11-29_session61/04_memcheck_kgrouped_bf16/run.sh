export OUT PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
cp "$0" $OUT/run.sh 2>/dev/null
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
JDG_SANITIZE_FILES=tests/test_gpu_grouped.py JDG_SANITIZE_K="k_grouped_hostile or k_grouped_bf16_out" JDG_SANITIZE_LIMIT=400 \
  bash tools/gpu_session.sh sanitize memcheck
grep -E "ERROR SUMMARY|sanitizer run|passed|failed" $OUT/memcheck.log | tail -12
date -u >> $OUT/machine.txt
