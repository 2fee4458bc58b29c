#!/usr/bin/env bash
# NOTES 102: the transposing quantization kernel's bf16 dense case, 52.6-54.1 us in session 57 and ~62 us since. The
# kernel's header as it is, with quantize_fallback_branch.patch (the element-wise load path that b0d3b39 removed, never
# taken: the host rejects rows that are not whole 16-byte vectors) and at a317aea, alternating, each JIT-compiled into
# its own cache (the editable install reads the header from the source tree). Run from the repository root.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT" /tmp/quantize_headers
python -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
header=cuda/jax_deepgemm/fp8_quantize.cuh
cp "$header" /tmp/quantize_headers/cur.cuh
cp "$header" /tmp/quantize_headers/branch.cuh && patch -s /tmp/quantize_headers/branch.cuh \
  benchmarks/experiments/quantize_fallback_branch.patch
git show a317aea:"$header" >/tmp/quantize_headers/a317aea.cuh
for v in cur branch a317aea cur branch; do
  cp "/tmp/quantize_headers/$v.cuh" "$header"
  echo "# $v"
  for case in dense "x [16384"; do
    DG_JIT_CACHE_DIR="/tmp/cache_$v" timeout 60 python benchmarks/experiments/transposed_cast.py "$case" --no-xla
  done
done 2>&1 | tee "$OUT/dense_ab.txt"
cp /tmp/quantize_headers/cur.cuh "$header"
