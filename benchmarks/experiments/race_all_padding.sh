# each all-padding contiguous case alone under racecheck, killed (with its python) after 60 s
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
mkdir -p $OUT/race
for id in "tests/test_gpu_configs.py::test_tma_store_contiguous[bm128-bn192-tma1-all_padding]" \
  "tests/test_gpu_configs.py::test_tma_store_contiguous[bm256-bn128-tma0-all_padding]" \
  "tests/test_gpu_configs.py::test_tma_store_contiguous[bm128-bn48-tma1-all_padding]" \
  "tests/test_gpu_configs.py::test_tma_store_contiguous[bm256-bn128-tma1-all_padding]"; do
  n=$(echo "$id" | sed 's/.*\[//; s/\]//')
  start=$(date +%s)
  setsid timeout -s KILL 60 "$CS" --tool racecheck --error-exitcode 1 python -I -m pytest "$id" -q -p no:cacheprovider \
    >"$OUT/race/$n.log" 2>&1
  rc=$?; pkill -9 -f "pytest tests/test_gpu" ; sleep 1
  echo "$n: rc $rc, $(( $(date +%s) - start )) s, $(grep -E "passed|failed|RACECHECK SUMMARY" "$OUT/race/$n.log" | tail -2 | tr '\n' ' ')"
done
