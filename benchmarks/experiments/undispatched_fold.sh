#!/usr/bin/env bash
# NOTES 102 (measured, not taken: +24 us a step): the MoE layer's second expert GEMM with the unsort folded into its
# backward's FP8 operands (undispatched_fold.patch: undispatched_ragged_dot; expert_ffn(gather=...) returns rows in
# (token, slot) order).
# Applies the patch to this copy, builds, runs its tests with the kernels, then the MoE steps with and without it in
# one process (moe_unsorted: the second GEMM as before). Run from the repository root on the GPU machine.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
git apply benchmarks/experiments/undispatched_fold.patch || { echo "the patch does not apply"; exit 1; }
python -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
timeout -k 5 150 python -I -m pytest -q -p no:cacheprovider tests/test_differentiable.py tests/test_nn.py \
  tests/test_cuda_lowering.py -k "dispatched or moe or expert" >"$OUT/tests.log" 2>&1
tail -2 "$OUT/tests.log"
(cd benchmarks/experiments &&
   XLA_PYTHON_CLIENT_PREALLOCATE=true timeout -k 5 240 python step_kernels.py moe moe_unsorted moe_x moe_x_unsorted \
   moe_before >"$OUT/step_kernels.txt" 2>&1)
grep -E "^moe" "$OUT/step_kernels.txt"
