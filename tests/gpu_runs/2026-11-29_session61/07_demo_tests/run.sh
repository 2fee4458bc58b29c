export OUT PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
cp "$0" $OUT/run.sh 2>/dev/null
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
XLA_PYTHON_CLIENT_PREALLOCATE=true timeout -k 5 170 python -m jax_deepgemm demo > $OUT/demo.log 2>&1; tail -10 $OUT/demo.log
timeout -k 5 140 python -I -m pytest tests/test_gpu_configs.py -k "tma_store_k_grouped or test_k_grouped" -q -rs -p no:cacheprovider > $OUT/tests_configs.log 2>&1 &
timeout -k 5 140 python -I -m pytest tests/test_gpu_grouped.py -k k_grouped -q -rs -p no:cacheprovider > $OUT/tests_grouped.log 2>&1 &
wait; for f in $OUT/tests_*.log; do echo "$f: $(tail -1 $f)"; grep -E "^FAILED|^ERROR" $f | head -5; done
date -u >> $OUT/machine.txt
