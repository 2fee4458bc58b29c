#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck of the fused SwiGLU backward kernels (NOTES 125, 127) over test_swiglu.py's
# cases (-k "not bad": the bad-input cases raise before any kernel; SANITIZE_K: another -k expression), only the
# jdg_* kernels instrumented; each tool first shows that it catches a fault in a jdg_* probe kernel
# (tools/gpu_session.sh).
. "$(dirname "$0")/prelude.sh"
build
S="$OUT/sanitize"; mkdir -p "$S"
OUT="$S" JDG_SANITIZE_FILES="tests/test_swiglu.py" JDG_SANITIZE_K="${SANITIZE_K:-not bad}" JDG_SANITIZE_LIMIT=240 \
  JDG_SANITIZE_ARGS="--kernel-name kns=jdg" \
  timeout -k 5 330 bash tools/gpu_session.sh sanitize memcheck racecheck 2>&1 | tail -24 | tee "$OUT/sanitize.txt"
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" sanitize build.log && rm -r "$S"
