"""The dense benchmark's kernel time of our fp8_gemm_nt only (no baselines), one line per M,N,K: for same-run
comparisons of DG_TUNE_* settings, which must be set before this process starts.

    DG_TUNE_CLUSTER=2 python benchmarks/experiments/dense_rows.py 4096,7168,16384 ...
    python benchmarks/experiments/dense_rows.py c=f32 4096,7168,16384   # with C (f32 out; c=bf16: bf16 out)
    python benchmarks/experiments/dense_rows.py out=f32 4096,7168,16384   # f32 out, no C
    python benchmarks/experiments/dense_rows.py b=rows 7168,2048,4096     # 1x128 B scales (the weight gradients')
"""

import sys

import jax

from jax_deepgemm import bench, fp8_gemm_nt, per_block_cast_to_fp8, per_token_cast_to_fp8

c_kind = next((a[2:] for a in sys.argv[1:] if a.startswith("c=")), None)  # None, "f32" or "bf16"
out_f32 = "out=f32" in sys.argv[1:]
b_cast = per_token_cast_to_fp8 if "b=rows" in sys.argv[1:] else per_block_cast_to_fp8
for spec in (a for a in sys.argv[1:] if "=" not in a):
    m, n, k = (int(v) for v in spec.split(","))
    kx, kw = jax.random.split(jax.random.key(m * 7 + n * 3 + k))
    a = jax.jit(per_token_cast_to_fp8)(jax.random.normal(kx, (m, k), jax.numpy.bfloat16))
    b = jax.jit(b_cast)(jax.random.normal(kw, (n, k), jax.numpy.bfloat16))
    if c_kind is None:
        out_dtype = jax.numpy.float32 if out_f32 else jax.numpy.bfloat16
        us = bench.profile(lambda a, b: fp8_gemm_nt(a, b, out_dtype=out_dtype), (a, b), iters=20,
                           kernel_prefix="jdg_")["us"]
    else:
        dtype = jax.numpy.float32 if c_kind == "f32" else jax.numpy.bfloat16
        c = jax.random.normal(jax.random.key(k), (m, n), dtype)
        us = bench.profile(lambda a, b, c: fp8_gemm_nt(a, b, c=c, out_dtype=dtype), (a, b, c), iters=20,
                           kernel_prefix="jdg_")["us"]
    label = f" c={c_kind}" if c_kind else " out=f32" if out_f32 else ""
    print(f"{m:6d} {n:6d} {k:6d}{label} {us:9.1f} us {2.0 * m * n * k / us / 1e6:7.1f} TFLOPS", flush=True)
