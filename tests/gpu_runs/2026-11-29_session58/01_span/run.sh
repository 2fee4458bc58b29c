# session 58 call 1: HEAD's quantization kernel on the GPU (tests, memcheck), the MoE step's span with / without it
export DG_JIT_CACHE_DIR=/tmp/jdg-cache PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; } > $OUT/machine.txt; cat $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
date -u
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 120 python -I -m pytest tests/test_transposed_cast.py -q -rs -p no:cacheprovider > $OUT/tests_tcast.log 2>&1
echo "tcast: $(tail -1 $OUT/tests_tcast.log)"; grep -E "^FAILED|^ERROR" $OUT/tests_tcast.log | head
date -u
timeout -k 5 330 python benchmarks/experiments/moe_quantize_span.py 2>&1 | grep -v "^E[0-9]" > $OUT/span.txt; cat $OUT/span.txt
date -u
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 100 $CS --tool memcheck --target-processes all python -I -m pytest tests/test_transposed_cast.py -q -x -p no:cacheprovider > $OUT/memcheck.log 2>&1
echo "memcheck: $(grep -E 'passed|failed|ERROR SUMMARY' $OUT/memcheck.log | tail -3)"
date -u
