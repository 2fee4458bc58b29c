"""The MoE layer's weighted SwiGLU backward as XLA fuses it (benchmarks/NOTES.md 124).

h = silu(gate) * up * w (float32 math, bf16 out; expert_ffn's), and its backward from dh: d(gate_up) [M, 2F] and dw
[M, 1]. Autodiff gives two fusions that each read gate_up and dh (the concatenated input gradient, and dw's row
sum). Written by hand, can XLA do both in one pass? Forms:
  autodiff     jax.vjp of the forward expression (today's)
  explicit     the same formulas by hand: concatenate, and a separate row sum
  concat_sum   dw summed over a [M, 2F] concatenate [dh * p, dh * 0] (the reduce's input then has d(gate_up)'s shape)
  autodiff_q   autodiff, then the dgrad's FP8 operand of d(gate_up) (token_cast_to_fp8: the MoE layer's step before
               NOTES 125)
  fused        jax_deepgemm.swiglu.swiglu_backward: d(gate_up), its FP8 operand and dw (one kernel on sm_90)
Each form's kernels per call (profiler, L2 flushed), its fusions, and its results against autodiff's.

    python benchmarks/experiments/swiglu_backward.py [M F [FORM ...]]
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import bench
from jax_deepgemm.swiglu import swiglu_backward
from jax_deepgemm.transposed_cast import token_cast_to_fp8

M, F = (int(v) for v in sys.argv[1:3]) if len(sys.argv) > 2 else (16384, 2048)


def forward(gate_up, w):
    gate, up = jnp.split(gate_up, 2, axis=-1)
    return (jax.nn.silu(gate.astype(jnp.float32)) * up.astype(jnp.float32) * w).astype(gate_up.dtype)


def autodiff(gate_up, w, dh):
    return jax.vjp(forward, gate_up, w)[1](dh)


def _pieces(gate_up, w, dh):
    gate, up = (p.astype(jnp.float32) for p in jnp.split(gate_up, 2, axis=-1))
    s = jax.nn.sigmoid(gate)
    silu = gate * s
    d = dh.astype(jnp.float32)
    dgate = d * w * up * (s * (1 + gate * (1 - s)))
    dup = d * w * silu
    return dgate, dup, d * silu * up


def explicit(gate_up, w, dh):
    dgate, dup, q = _pieces(gate_up, w, dh)
    return jnp.concatenate([dgate, dup], axis=-1).astype(gate_up.dtype), jnp.sum(q, axis=-1, keepdims=True)


def concat_sum(gate_up, w, dh):
    dgate, dup, q = _pieces(gate_up, w, dh)
    d_gate_up = jnp.concatenate([dgate, dup], axis=-1).astype(gate_up.dtype)
    return d_gate_up, jnp.sum(jnp.concatenate([q, dh.astype(jnp.float32) * 0.0], axis=-1), axis=-1, keepdims=True)


def autodiff_q(gate_up, w, dh):
    d_gate_up, dw = autodiff(gate_up, w, dh)
    return d_gate_up, dw, token_cast_to_fp8(d_gate_up)


def fused(gate_up, w, dh):
    d_gate_up, quantized, dw = swiglu_backward(gate_up, dh, w[:, 0])
    return d_gate_up, dw[:, None], quantized


k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
args = (jax.random.normal(k1, (M, 2 * F), jnp.bfloat16), jax.random.uniform(k2, (M, 1), jnp.float32, 0.1, 1.0),
        jax.random.normal(k3, (M, F), jnp.bfloat16))
want = [np.asarray(x, np.float64) for x in jax.jit(autodiff)(*args)]
FORMS = {"autodiff": autodiff, "explicit": explicit, "concat_sum": concat_sum, "autodiff_q": autodiff_q, "fused": fused}
for name in sys.argv[3:] or FORMS:
    fn = FORMS[name]
    hlo = jax.jit(fn).lower(*args).compile().as_text()
    entry = hlo[hlo.index("ENTRY"):]
    fusions = [line.split("=")[0].strip() for line in entry.splitlines() if " fusion(" in line]
    got = [np.asarray(x, np.float64) for x in jax.jit(fn)(*args)[:2]]
    diff = [float(np.max(np.abs(g - w_) / (np.abs(w_) + 1e-3))) for g, w_ in zip(got, want)]
    times = [bench.profile(fn, args, iters=20, kernel_prefix=None, wall_rounds=0)["us"] for _ in range(2)]
    print(f"{name:10s} {times[0]:7.1f} / {times[1]:7.1f} us  fusions {len(fusions)}: {', '.join(fusions)}  "
          f"largest relative difference from autodiff: d(gate_up) {diff[0]:.1e}, dw {diff[1]:.1e}", flush=True)
