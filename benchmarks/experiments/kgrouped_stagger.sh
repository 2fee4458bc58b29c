#!/usr/bin/env bash
# The MoE step's k-grouped weight gradients (16 groups of ~1024 tokens, f32 out without C: NOTES 103) with the CTAs'
# first tiles staggered (kgrouped_stagger.patch: odd CTAs wait JDG_EXP_STAGGER_NS first), against the kernel as it
# is, alternating, each variant in its own process and kernel cache. Run from the repository root on the GPU machine.
# (Ran in session 60 as `04_`, before its loop line was wrapped: no effect, NOTES 103.)
set -uo pipefail
OUT="${OUT:-./gpu-out}"
rows=(k_grouped_no_c=16,7168,4096,1024 k_grouped_no_c=16,2048,7168,1024 k_grouped=4,4096,7168,8192)
header=cuda/jax_deepgemm/fp8_gemm.cuh
patch -p1 <benchmarks/experiments/kgrouped_stagger.patch
cp "$header" /tmp/stagger_header.cuh
for round in 1 2; do
  for ns in 0 3000 6000; do
    cp /tmp/stagger_header.cuh "$header"
    [ "$ns" != 0 ] && sed -i "1i #define JDG_EXP_STAGGER_NS $ns" "$header"
    echo "# round $round, stagger $ns ns"
    (cd benchmarks/experiments &&
       DG_JIT_CACHE_DIR=/tmp/jdg-stagger-$ns timeout -k 5 120 python grouped_rows.py "${rows[@]}")
  done
done 2>&1 | tee "$OUT/stagger.txt"
cp /tmp/stagger_header.cuh "$header"
patch -R -p1 <benchmarks/experiments/kgrouped_stagger.patch
