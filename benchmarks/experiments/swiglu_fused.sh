#!/usr/bin/env bash
# The fused SwiGLU backward (NOTES 125): the sent tree ("new") against 15268f1 ("old", .abtrees/15268f1, carried),
# both with pip --target. swiglu_backward.py's forms with the new package (the kernel against XLA's fusions); the MoE
# step's kernels (step_kernels.py moe_x_bf16), old / new, two rounds; then the sent tree installed editable and the
# GPU tests of test_swiglu.py, test_transposed_cast.py, test_nn.py, test_remat.py, test_moe_expert_parallel.py and
# test_differentiable.py (8 processes); then the demo.
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
git log --oneline -1 >> "$OUT/machine.txt"
ab_install new . old .abtrees/15268f1
side new timeout -k 5 200 python $R/benchmarks/experiments/swiglu_backward.py 2>&1 | grep -v -i warning |
  tee "$OUT/forms.txt"
step_rounds old new moe_x_bf16
build
parallel_tests tests/test_swiglu.py tests/test_transposed_cast.py tests/test_nn.py tests/test_remat.py \
  tests/test_moe_expert_parallel.py tests/test_differentiable.py
unset XLA_PYTHON_CLIENT_PREALLOCATE
timeout -k 5 150 python -m jax_deepgemm demo 2>&1 | grep -v -i warning > "$OUT/demo.txt"
tail -14 "$OUT/demo.txt"
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
