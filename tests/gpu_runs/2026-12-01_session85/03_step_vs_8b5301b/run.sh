#!/usr/bin/env bash
# `bash benchmarks/experiments/step_ab.sh OLD_TREE [TEST_FILE...]` (carry OLD_TREE, e.g. .abtrees/<commit> from
# `git archive <commit> | tar -x -C .abtrees/<commit> --exclude=tests --exclude=benchmarks`): a kernel change against
# the tree before it. The sent tree ("new") and OLD_TREE ("old") installed with pip --target; the test files with the
# new package (8 processes, their FP8 bits held to the helpers' run by XLA); then the MoE step's kernels, old / new,
# two rounds (each kernel family's line shows its change).
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
old_tree=${1:?usage: step_ab.sh OLD_TREE [TEST_FILE...]}
shift
ab_install new . old "$old_tree"
if [ $# -gt 0 ]; then
  side new env OUT="$OUT" bash -c "cd $R && . benchmarks/experiments/prelude.sh && PYTEST='python -P -m pytest' \
    parallel_tests $*" 2>&1 | tee "$OUT/tests.txt"
fi
step_rounds old new moe_x_bf16
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
