#!/usr/bin/env bash
# The grouped SwiGLU backward's kernel in variants (NOTES 127), by patching the installed headers (compiled at run
# time): v0 the sent tree's (512 threads, at most 128 registers, one CTA per SM); v1 with __launch_bounds__(512, 2)
# (64 registers: two CTAs per SM, with spills). swiglu_grouped.py's forms for each (variants.txt); then
# swiglu_grouped.sh (the A/B of the MoE step and the GPU tests, TESTS as given, without the demo: NO_DEMO=1).
. "$(dirname "$0")/prelude.sh"
# The grouped kernel was not taken (NOTES 127): it lives in swiglu_grouped.patch, applied here (once).
git apply --reverse --check benchmarks/experiments/swiglu_grouped.patch 2>/dev/null ||
  git apply benchmarks/experiments/swiglu_grouped.patch || { echo "swiglu_grouped.patch does not apply"; exit 1; }
build
H=cuda/jax_deepgemm/fp8_quantize.cuh
LB='__launch_bounds__(jdg::fp8_quantize::kThreads'
cp $H /tmp/header.cuh
for v in v0 v1; do
  cp /tmp/header.cuh $H
  [ $v = v1 ] && sed -i "s|$LB)\$|$LB, 2)|" $H
  grep -c "kThreads, 2)" $H | sed "s/^/$v patched lines: /" >> "$OUT/variants.txt"
  DG_JIT_CACHE_DIR=/tmp/c_$v timeout -k 5 120 python benchmarks/experiments/swiglu_grouped.py 2>&1 |
    grep -v -i warning | sed "s/^/$v /" | tee -a "$OUT/variants.txt"
done
cp /tmp/header.cuh $H
NO_DEMO=1 bash benchmarks/experiments/swiglu_grouped.sh
