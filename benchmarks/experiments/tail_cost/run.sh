#!/usr/bin/env bash
# NOTES 27's open question: where a tail-split kernel's ~0.5 us per tile goes. Each variant (a patch of
# fp8_gemm.cuh, timing only: never_split / no_exchange / bare, see NOTES 27) against the kernel as committed, with
# DG_TUNE_TAIL_SPLIT=0 and =1: DG_PROFILE_WAITS cycles per K block of 4096 x 7168 x 2048 and 4096 x 32768 x 512, and
# the benchmark's kernel time of three dense rows. One device call: bash benchmarks/experiments/tail_cost/run.sh
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
here=benchmarks/experiments/tail_cost
for variant in committed never_split no_exchange bare; do
  [ "$variant" = committed ] || git apply "$here/$variant.patch" || { echo "$variant: patch does not apply"; continue; }
  export DG_JIT_CACHE_DIR="/tmp/jdg-cache-$variant"
  for t in 0 1; do
    [ "$variant" != committed ] && [ "$t" = 0 ] && continue  # the patches only touch tail-split kernels
    for shape in 4096,7168,2048 4096,32768,512; do
      echo "## $variant tail=$t dense $shape"
      DG_TUNE_TAIL_SPLIT=$t DG_PROFILE_WAITS=1 JDG_PROFILE_RUNS=5 timeout 90 \
        python tools/profile_one.py dense "$shape" 2>&1 | grep -E "waits:"
    done
    DG_TUNE_TAIL_SPLIT=$t timeout 90 python -m jax_deepgemm bench --only dense --iters 20 \
      --output "$OUT/$variant$t.json" --shape 4096,7168,2048 --shape 4096,24576,1536 --shape 4096,32768,512 2>&1 |
      grep -E "^ +[0-9]" |
      sed "s/^/$variant tail=$t /" >&2
  done >"$OUT/waits_$variant.log"
  [ "$variant" = committed ] || git apply -R "$here/$variant.patch"
done 2>&1 | tee "$OUT/bench.txt"
cat "$OUT"/waits_*.log | python tools/waits_summary.py | tee "$OUT/waits_summary.txt"
(cd "$OUT" && tar czf tail_cost.tgz waits_*.log ./*.json && rm waits_*.log ./*.json)
