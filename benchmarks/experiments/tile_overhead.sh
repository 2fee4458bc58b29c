#!/usr/bin/env bash
# Where the per-tile time of short-K tiles goes (NOTES 31): the kernel as is against two timing-only variants (wrong
# results): "noscale", the tile's first B-scale chunk from a register instead of a global load (what prefetching it
# would save at most), and "noepi", no epilogue (the result tile only summed, never stored). Kernel time, dense
# M = 4096 rows. One device call; logs under $OUT.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
K=cuda/jax_deepgemm/fp8_gemm.cuh
rm -rf /tmp/v_* && for v in asis noscale noepi; do cp -r cuda /tmp/v_$v; done
python benchmarks/experiments/noepi_variant.py /tmp/v_noepi
python - <<'PY'
k = "jax_deepgemm/fp8_gemm.cuh"
p = "/tmp/v_noscale/" + k
s = open(p).read()
old = "load_b_scale_chunk(sb_chunk, b_scale_blk[0], tile.kb0, kb_end - 1, lane, any_active && tile.num_kb > 0);"
assert old in s
s = s.replace(old, "sb_chunk = __int_as_float(0x3f800000 | lane);")
open(p, "w").write(s)
PY
dense="4096,32768,512 4096,24576,1536 4096,7168,2048 2048,7168,2048 4096,7168,16384 4096,2112,7168"
for v in asis noscale noepi asis; do
  rm -rf cuda && cp -r /tmp/v_$v cuda
  DG_JIT_CACHE_DIR=/tmp/v_cache_$v timeout -k 5 100 python benchmarks/experiments/dense_rows.py $dense 2>&1 |
    grep -E " us |rror" | sed "s/^/$v /"
done | tee "$OUT/tile_overhead.txt"
rm -rf cuda && cp -r /tmp/v_asis cuda
