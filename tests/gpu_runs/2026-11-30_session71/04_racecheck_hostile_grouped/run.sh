set -u
cd "$(dirname "$0")"
TOOL=racecheck LIMIT=380 K="negative or huge or garbage or random or extremes or out_of_range or all_zero or all_empty or all_padding or sum_past or poison" bash .run4body.sh
mkdir -p "$OUT/header" && export DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for run in 1 2 3; do
  timeout -k 5 90 "$CS" --tool memcheck --error-exitcode 1 python -I -m pytest tests/test_hostile_data.py -v \
    -p no:cacheprovider -k "random_int32" > "$OUT/header/memcheck_random_int32_$run.log" 2>&1
  st=$?; echo "memcheck random_int32 run $run: exit $st"; tail -3 "$OUT/header/memcheck_random_int32_$run.log"
  [ "$st" = 139 ] || break
done
