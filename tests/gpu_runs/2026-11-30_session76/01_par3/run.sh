#!/usr/bin/env bash
# session 76, call 1: par 3 on HEAD's kernels (e204c31's, with the FFMA hint pass)
cp .run1.sh "$OUT/run.sh"
JDG_PAR_LIMIT=420 bash tools/gpu_session.sh par 3 2>&1 | tail -30
cd "$OUT" && tar czf par3_logs.tgz par && rm -rf par
