set -u
cd "$(dirname "$0")"
JDG_PAR_LIMIT=420 bash tools/gpu_session.sh par 3 2>&1 | tee "$OUT/par3.txt"
mkdir -p /tmp/p3 && tar xzf "$OUT/tests_par_logs.tgz" -C /tmp/p3 && grep -h "^jax_deepgemm:" /tmp/p3/par/*.log | sort | uniq -c
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
for run in 1 2 3 4; do
  timeout -k 5 100 "$CS" --tool memcheck --error-exitcode 1 python -I -m pytest tests/test_hostile_data.py -v \
    -p no:cacheprovider > "$OUT/memcheck_hostile_$run.log" 2>&1
  st=$?; echo "memcheck run $run: exit $st"; tail -3 "$OUT/memcheck_hostile_$run.log"
  [ "$st" = 139 ] || break
done
