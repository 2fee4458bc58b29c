set -u
JDG_SANITIZE_FILES="tests/test_transposed_cast.py tests/test_hostile_data.py" \
  JDG_SANITIZE_K="test_transposed_cast and not bad_input or ragged_dot_garbage_sizes" \
  JDG_SANITIZE_PROCS=6 JDG_SANITIZE_LIMIT=470 bash tools/gpu_session.sh sanitize racecheck 2>&1 | tee "$OUT/sanitize.txt"
cp .run1.sh "$OUT/run.sh"
