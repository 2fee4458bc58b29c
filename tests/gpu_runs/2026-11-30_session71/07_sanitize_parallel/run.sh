set -u
cd "$(dirname "$0")"
JDG_SANITIZE_FILES="tests/test_hostile_data.py tests/test_grouped.py" JDG_SANITIZE_K="random or extremes" \
  JDG_SANITIZE_LIMIT=200 bash tools/gpu_session.sh sanitize memcheck 2>&1 | tee "$OUT/sanitize.txt"
