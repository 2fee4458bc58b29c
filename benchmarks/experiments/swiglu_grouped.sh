#!/usr/bin/env bash
# The grouped SwiGLU backward (NOTES 127): the sent tree ("new") against 423efd4 ("old", .abtrees/423efd4, carried),
# both with pip --target. swiglu_grouped.py's two forms with the new package (bits compared); the MoE step's kernels
# (step_kernels.py moe_x_bf16), old / new, two rounds; then the sent tree installed editable and the GPU tests of
# test_swiglu.py, test_transposed_cast.py, test_nn.py, test_remat.py, test_moe_expert_parallel.py,
# test_differentiable.py and test_hostile_data.py (8 processes; TESTS: other files); then the demo (not with NO_DEMO).
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
# The grouped kernel was not taken (NOTES 127): it lives in swiglu_grouped.patch, applied here (once).
git apply --reverse --check benchmarks/experiments/swiglu_grouped.patch 2>/dev/null ||
  git apply benchmarks/experiments/swiglu_grouped.patch || { echo "swiglu_grouped.patch does not apply"; exit 1; }
ab_install new . old .abtrees/423efd4
side new timeout -k 5 150 python $R/benchmarks/experiments/swiglu_grouped.py 2>&1 | grep -v -i warning |
  tee "$OUT/forms.txt"
step_rounds old new moe_x_bf16
build
parallel_tests ${TESTS:-tests/test_swiglu.py tests/test_transposed_cast.py tests/test_nn.py tests/test_remat.py \
  tests/test_moe_expert_parallel.py tests/test_differentiable.py tests/test_hostile_data.py}
unset XLA_PYTHON_CLIENT_PREALLOCATE
if [ -z "${NO_DEMO:-}" ]; then
  timeout -k 5 150 python -m jax_deepgemm demo 2>&1 | grep -v -i warning > "$OUT/demo.txt"
  tail -14 "$OUT/demo.txt"
fi
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
