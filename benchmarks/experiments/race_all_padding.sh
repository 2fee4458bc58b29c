#!/usr/bin/env bash
# The contiguous all-padding GPU cases, each alone under compute-sanitizer racecheck (NOTES 66): a run of several in
# one process stopped inside one of them twice (sessions 30, 31), each time at the device call's limit. Each case
# here gets its own process, killed with its python after 60 s (a plain `timeout` kills the sanitizer only, and the
# orphaned python kept the log's pipe open). Arguments: pytest ids (default: all of them).
#     bash benchmarks/experiments/race_all_padding.sh [ID...]     (one device call)
. "$(dirname "$0")/prelude.sh"
build
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
mkdir -p "$OUT/race"
ids=("$@")
[ ${#ids[@]} -gt 0 ] || mapfile -t ids < <(python -I -m pytest tests/test_gpu_grouped.py tests/test_gpu_configs.py \
  -k "all_padding and contiguous" --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::")
for id in "${ids[@]}"; do
  name=$(echo "$id" | sed 's/.*:://; s/[][]/_/g')
  start=$(date +%s)
  setsid timeout -s KILL 60 "$CS" --tool racecheck --error-exitcode 1 python -I -m pytest "$id" -q -p no:cacheprovider \
    >"$OUT/race/$name.log" 2>&1
  rc=$?
  pkill -9 -f "pytest tests/test_gpu"; sleep 1
  echo "$name: rc $rc, $(($(date +%s) - start)) s, $(grep -E "passed|failed|RACECHECK SUMMARY" "$OUT/race/$name.log" |
    tail -2 | tr '\n' ' ')"
done | tee "$OUT/race_all_padding.txt"
