set -u
# racecheck, only this package's kernels instrumented, over the FP8 backward passes and the hostile-data files
JDG_SANITIZE_FILES="tests/test_differentiable.py tests/test_hostile_data.py tests/test_grouped.py" \
  JDG_SANITIZE_K="not bad_input" JDG_SANITIZE_ARGS="--kernel-name kns=jdg" \
  JDG_SANITIZE_PROCS=8 JDG_SANITIZE_LIMIT=300 bash tools/gpu_session.sh sanitize racecheck 2>&1 | tee "$OUT/sanitize.txt"
cp .run6.sh "$OUT/run.sh"
