#!/usr/bin/env bash
# memcheck of the selection's cases that 02_memcheck did not reach (memcheck_rest_cases.txt), from case $1 (1-based)
# on, with Python's fault handler on (a segfault prints the Python stack); $2: the time limit in seconds; SANITIZE=0:
# the same cases without compute-sanitizer. Log: $OUT/memcheck_rest_<first case>.log (plain_rest_...). From the repo
# root, on the GPU machine.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
export XLA_PYTHON_CLIENT_PREALLOCATE=false DG_JIT_CACHE_DIR=/tmp/jdg-cache PYTHONUNBUFFERED=1
tail -n +"${1:-1}" tests/gpu_runs/2026-11-27_session33/memcheck_rest_cases.txt >/tmp/cases.txt
if [ "${SANITIZE:-1}" = 0 ]; then run=(); log="$OUT/plain_rest_${1:-1}.log"; else
  run=(compute-sanitizer --tool memcheck --error-exitcode 1); log="$OUT/memcheck_rest_${1:-1}.log"; fi
# shellcheck disable=SC2046  # one case per word
timeout -k 5 "${2:-420}" "${run[@]}" python -X faulthandler -I -m pytest $(cat /tmp/cases.txt) -v -p no:cacheprovider \
  >"$log" 2>&1
echo "$(basename "$log") exit $?"
pkill -9 -f "X faulthandler -I -m pytest" || true
grep -c " PASSED" "$log"
grep -E "ERROR SUMMARY|Fatal Python|Segmentation|passed|failed" "$log" | tail -5
