#!/usr/bin/env bash
# What a ragged group's mostly empty last tile costs (ragged_tail_cost.py); then memcheck and racecheck of the
# transposing quantization kernel's cases (its per-column scales' new layout, d276822, not sanitized before).
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -q -e . > "$OUT/logs/build.log" 2>&1 || { tail "$OUT/logs/build.log"; exit 1; }
timeout -k 5 200 python benchmarks/experiments/ragged_tail_cost.py 2>&1 | grep -v -i warning | tee "$OUT/tail_cost.txt"
date -u
S="$OUT/logs/sanitize"; mkdir -p "$S"
OUT="$S" JDG_SANITIZE_FILES="tests/test_transposed_cast.py" JDG_SANITIZE_K="not bad" JDG_SANITIZE_LIMIT=240 \
  JDG_SANITIZE_ARGS="--kernel-name kns=jdg" \
  timeout -k 5 330 bash tools/gpu_session.sh sanitize memcheck racecheck 2>&1 | tail -20 | tee "$OUT/sanitize.txt"
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
