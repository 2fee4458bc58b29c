# Session 63 call 7 (the final kernels): test_gpu_dense.py, test_threads.py, test_gpu_sharding.py in 4 processes.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup
cp .run7.sh "$OUT/run.sh"; git log --oneline -1 >>"$OUT/machine.txt"
export DG_JIT_CACHE_DIR=/tmp/jdg-tests67
python -I -m pytest tests/test_gpu_dense.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" >/tmp/d_ids.txt
rm -f /tmp/d_ids_*; split -n r/3 -d /tmp/d_ids.txt /tmp/d_ids_
for part in /tmp/d_ids_0*; do JDG_TEST_LIMIT=170 ab_tests "dense_${part##*_}" -rs $(cat "$part") & done
JDG_TEST_LIMIT=170 ab_tests threads_sharding -rs tests/test_threads.py tests/test_gpu_sharding.py &
wait; rm -f $OUT/build.log; echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
