#!/usr/bin/env bash
# session 76, call 3: memcheck of the default sanitizer selection on HEAD's kernels, only jdg_* kernels instrumented
cp .run3.sh "$OUT/run.sh"
JDG_SANITIZE_PROCS=8 JDG_SANITIZE_ARGS="--kernel-name kns=jdg" JDG_SANITIZE_LIMIT=450 \
  bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -30
cd "$OUT" && ls
