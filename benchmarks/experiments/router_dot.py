"""The MoE router's float32 product on the GPU (NOTES 123): x [4096, 7168] bf16 times router_w [7168, 16] float32,
the logits' softmax and top-k as nn.moe routes, value_and_grad over (router_w, x); GPU time per step of XLA's kernels
with the product at Precision.HIGHEST (nn.moe's now), as DotAlgorithmPreset.BF16_BF16_F32_X6, and as exact bf16
pieces (router_w split into three bf16 parts whose sum is it, so every product is exact on the tensor cores; the
gradients the same way), and each one's largest differences from a float64 NumPy product.

    python benchmarks/experiments/router_dot.py
"""

import collections

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import bench

T, D, E, TOP_K = 4096, 7168, 16, 4
F32, BF16 = jnp.float32, jnp.bfloat16


def pieces(a):
    """a (float32) as three bfloat16 arrays whose float32 sum is a exactly (outside bf16's subnormal range)."""
    hi = a.astype(BF16)
    rest = a - hi.astype(F32)
    mid = rest.astype(BF16)
    return hi, mid, (rest - mid.astype(F32)).astype(BF16)


def summed(out, n):  # out [..., n * E] -> the sum of its n slices of E columns, in order
    parts = jnp.split(out, n, axis=-1)
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def bf16_dot(a, b):
    return jnp.dot(a, b, preferred_element_type=F32)


@jax.custom_vjp
def split_dot(x, w):  # x [T, D] bf16, w [D, E] f32 -> x @ w in float32, every product exact
    return summed(bf16_dot(x, jnp.concatenate(pieces(w), axis=1)), 3)


def split_fwd(x, w):
    return split_dot(x, w), (x, w)


def split_bwd(res, g):
    x, w = res
    g3 = pieces(g)
    dw = summed(bf16_dot(x.T, jnp.concatenate(g3, axis=1)), 3)
    w3 = pieces(w)
    g9 = jnp.concatenate([gi for gi in g3 for _ in w3], axis=1)
    w9 = jnp.concatenate([wj for _ in g3 for wj in w3], axis=1)
    dx = jnp.dot(g9, w9.T, preferred_element_type=F32)
    return dx.astype(x.dtype), dw


split_dot.defvjp(split_fwd, split_bwd)

DOTS = {
    "HIGHEST": lambda x, w: jnp.dot(x.astype(F32), w, precision=jax.lax.Precision.HIGHEST),
    "X6": lambda x, w: jnp.dot(x.astype(F32), w, precision=jax.lax.DotAlgorithmPreset.BF16_BF16_F32_X6),
    "bf16 pieces": split_dot,
}

keys = jax.random.split(jax.random.key(0), 3)
x = jax.random.normal(keys[0], (T, D), BF16)
w = jax.random.normal(keys[1], (D, E), F32) * D**-0.5
c = jax.random.normal(keys[2], (T, TOP_K), F32)
x64, w64 = np.asarray(x, np.float64), np.asarray(w, np.float64)
g64 = np.asarray(jax.random.normal(keys[2], (T, E), F32), np.float64)  # a cotangent for the product alone

for name, dot in DOTS.items():
    def loss(w, x):
        weights, _ = jax.lax.top_k(jax.nn.softmax(dot(x, w), axis=-1), TOP_K)
        return jnp.sum(weights / jnp.sum(weights, axis=-1, keepdims=True) * c)
    step = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
    for _ in range(3):
        jax.block_until_ready(step(w, x))
    events = bench._trace_kernels(lambda: [jax.block_until_ready(step(w, x)) for _ in range(10)])
    per_name = collections.Counter()
    for kernel, start, end in events:
        per_name[kernel] += (end - start) / 1e3 / 10
    y, vjp = jax.vjp(jax.jit(dot), x, w)
    dx, dw = vjp(jnp.asarray(g64, F32))
    err = [np.abs(np.asarray(y, np.float64) - x64 @ w64).max(), np.abs(np.asarray(dw, np.float64) - x64.T @ g64).max(),
           np.abs(np.asarray(dx.astype(F32), np.float64) - g64 @ w64.T).max()]
    kernels = ", ".join(f"{k[:26]} {v:.1f}" for k, v in per_name.most_common(5))
    print(f"{name:12s} {sum(per_name.values()):7.1f} us per step   max |err| logits {err[0]:.2e} d_w {err[1]:.2e} "
          f"d_x {err[2]:.2e}   ({kernels})")
