"""Is this machine's H100 as fast as the one GPU.md's reference numbers came from? GPU.md times XLA's per-tensor FP8
dot (cuBLASLt) on 4096 x 7168 x 16384 at 587 us; the bench's baseline, which scales the f32 product afterwards,
read ~660 (NOTES 54; it now takes the bf16 form below). This times five ways to write that dot, lists each one's
kernels (name, median us per call), and our kernel on the same inputs, so that the cuBLAS GEMM kernel alone can be
compared with GPU.md's 587.

    python benchmarks/experiments/xla_fp8_forms.py 4096,7168,16384 4096,4096,7168
"""

import sys

import jax
import jax.numpy as jnp

from jax_deepgemm import bench, fp8_gemm_nt, per_block_cast_to_fp8, per_token_cast_to_fp8

DIMS = (((1,), (1,)), ((), ()))


def f32_then_scale(x8, sx, w8, sw):  # the bench's baseline before 2f2cf73
    d = jax.lax.dot_general(x8, w8, DIMS, preferred_element_type=jnp.float32)
    return (d * (sx * sw)).astype(jnp.bfloat16)


def dequantize_pattern(x8, sx, w8, sw):  # the form XLA's GEMM rewriter turns into a scaled FP8 cuBLASLt call
    x = x8.astype(jnp.bfloat16) * sx.astype(jnp.bfloat16)
    w = w8.astype(jnp.bfloat16) * sw.astype(jnp.bfloat16)
    return jax.lax.dot_general(x, w, DIMS, preferred_element_type=jnp.bfloat16)


def dequantize_f32(x8, sx, w8, sw):  # the same pattern dequantized to f32, the product cast to bf16
    x = x8.astype(jnp.float32) * sx
    w = w8.astype(jnp.float32) * sw
    return jax.lax.dot_general(x, w, DIMS, preferred_element_type=jnp.float32).astype(jnp.bfloat16)


def bf16_then_scale(x8, sx, w8, sw):  # bf16 out, the scales' product applied to it
    d = jax.lax.dot_general(x8, w8, DIMS, preferred_element_type=jnp.bfloat16)
    return d * (sx * sw).astype(jnp.bfloat16)


def bf16_out_unscaled(x8, sx, w8, sw):  # the FP8 GEMM alone, bf16 out
    return jax.lax.dot_general(x8, w8, DIMS, preferred_element_type=jnp.bfloat16)


for spec in sys.argv[1:]:
    m, n, k = (int(v) for v in spec.split(","))
    kx, kw = jax.random.split(jax.random.key(m * 7 + n * 3 + k))
    x = jax.random.normal(kx, (m, k), jnp.bfloat16)
    w = jax.random.normal(kw, (n, k), jnp.bfloat16)
    x8, sx, w8, sw = jax.jit(bench._per_tensor_fp8_dot)(x, w)
    flops = 2.0 * m * n * k
    for fn in (f32_then_scale, dequantize_pattern, dequantize_f32, bf16_then_scale, bf16_out_unscaled):
        for name, us in bench.kernels_per_call(fn, (x8, sx, w8, sw)).items():
            print(f"{m} {n} {k} {fn.__name__:20s} {us:8.1f} us {flops / us / 1e6:7.1f} TFLOPS  {name[:90]}",
                  flush=True)
    a, b = jax.jit(per_token_cast_to_fp8)(x), jax.jit(per_block_cast_to_fp8)(w)
    for name, us in bench.kernels_per_call(fp8_gemm_nt, (a, b)).items():
        print(f"{m} {n} {k} {'ours':20s} {us:8.1f} us {flops / us / 1e6:7.1f} TFLOPS  {name[:90]}", flush=True)
