#!/usr/bin/env bash
# Session 72's unverified tidy on the GPU: the probe's new source and the sanitize phase from tools/sanitize_runs.sh,
# on a few dense cases (layouts, inside_scan, unaligned rows in clusters), both tools.
export PATH=/usr/local/cuda/bin:$PATH
final=$OUT; OUT=/tmp/s2; mkdir -p $OUT
JDG_SANITIZE_FILES="tests/test_gpu_dense.py" JDG_SANITIZE_K="layouts or inside_scan or unaligned_rows" \
  JDG_SANITIZE_LIMIT=200 OUT=$OUT bash tools/gpu_session.sh sanitize racecheck memcheck 2>&1 | tee $OUT/summary.txt
tar -czf "$final/sanitize_logs.tgz" -C /tmp s2; cp $OUT/summary.txt "$final/"
