#!/usr/bin/env bash
# Prepared, not run (no device time was left in session 82; NOTES 127): the quantization kernels' division as one
# multiply by the scale's approximate reciprocal (fast_divide.patch, applied here to fp8_cast.cuh): the sent tree with
# the patch ("new") against 423efd4 ("old", .abtrees/423efd4, carried), both with pip --target. First the bits:
# test_transposed_cast.py and test_swiglu.py with the new package (8 processes; they hold the kernels' FP8 results to
# the helpers' run by XLA, which divides with div.full); then the MoE step's kernels, old / new, two rounds (the
# quantization kernels' lines show each family's change).
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
git apply --reverse --check benchmarks/experiments/fast_divide.patch 2>/dev/null ||
  git apply benchmarks/experiments/fast_divide.patch || { echo "fast_divide.patch does not apply"; exit 1; }
ab_install new . old .abtrees/423efd4
side new env OUT="$OUT" bash -c "cd $R && . benchmarks/experiments/prelude.sh && PYTEST='python -P -m pytest' \
  parallel_tests tests/test_transposed_cast.py tests/test_swiglu.py" 2>&1 | tee "$OUT/tests.txt"
step_rounds old new moe_x_bf16
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
