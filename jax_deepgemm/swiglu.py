"""The MoE experts' weighted SwiGLU, h = silu(g) * u * w for x = [g | u] and one weight w per row, and its backward
pass fused with the per-token FP8 quantization that the next GEMM's backward takes of its result.

`swiglu_backward(x, dh, w)` -> (dx, (data, scale), dw):
  dx     [g | u]'s gradient in x.dtype: dg = dh * w * u * s * (1 + g * (1 - s)) and du = dh * w * silu(g), s =
         sigmoid(g), computed in float32 and rounded once;
  data, scale  per_token_cast_to_fp8(dx), bit for bit (of dx as returned): the dgrad GEMM's A operand;
  dw     float32 [rows]: sum over the row of dh * silu(g) * u, w's gradient.
As XLA fusions this is two passes over x and dh (dx, dw) and the quantization's pass over dx; on sm_90 with the
kernels, for bfloat16 x and dh with F a multiple of 128, one kernel reads x and dh once
(`cuda/jax_deepgemm/swiglu_backward.cuh`).
Its silu uses the GPU's fast exponential, so its dx and dw differ from the reference below by a few float32 roundings:
tests/test_swiglu.py holds both to a float64 oracle (dx within one unit in its last place plus 2^-18 of its terms'
magnitudes, dw within (F + 64) float32 roundings of its terms' magnitudes), and its FP8 result to the helper's of its
own dx, bit for bit.

One primitive, internal to the package (the MoE layer's `dispatched_swiglu`, differentiable.py, takes it):
  lowering   on CUDA with the kernels where the kernel applies (above), outside programs over several devices: the
             FFI call "jdg_fp8_quantize_t" in its swiglu_backward mode; everywhere else the reference below;
  batching   every row is its own problem: batch axes become rows;
  no JVP     the caller is a custom VJP's backward rule.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import batching, mlir, xla

from . import runtime
from .kernels import QUANTIZE_T_TARGET
from .primitives import _shaped, match_vma
from .quantization import BLOCK, ceil_div, per_token_cast_to_fp8
from .sharding import _sharded_program


def _split(x):
    g, u = jnp.split(x.astype(jnp.float32), 2, axis=-1)
    return g, u


def swiglu(x, w, dtype):
    """h = silu(g) * u * w [rows, F] in dtype, for x = [g | u] [rows, 2F] and w [rows] (float32 throughout)."""
    g, u = _split(x)
    return (jax.nn.silu(g) * u * w.astype(jnp.float32)[:, None]).astype(dtype)


def swiglu_backward(x, dh, w):
    """x = [g | u] [rows, 2F], dh [rows, F] (h's gradient, taken in x.dtype), w [rows] -> (dx [rows, 2F] in x.dtype,
    (data float8_e4m3fn [rows, 2F], scale float32 [rows, ceil(2F / 128)]), dw float32 [rows]); see the module's
    text."""
    fn = "swiglu_backward"
    if jnp.ndim(x) != 2 or x.shape[1] % 2:
        raise ValueError(f"{fn}: x must be [rows, 2F] (gate and up side by side), got shape {jnp.shape(x)}")
    rows, f = x.shape[0], x.shape[1] // 2
    if jnp.shape(dh) != (rows, f):
        raise ValueError(f"{fn}: dh must be [rows, F] = [{rows}, {f}] for x {tuple(x.shape)}, got {jnp.shape(dh)}")
    if jnp.shape(w) != (rows,):
        raise ValueError(f"{fn}: w must be [rows] = [{rows}], got shape {jnp.shape(w)}")
    for name, a in (("x", x), ("dh", dh), ("w", w)):
        if not jnp.issubdtype(jnp.result_type(a), jnp.floating):
            raise TypeError(f"{fn}: {name} must be a floating array, got {jnp.result_type(a)}")
    x, dh, w = match_vma(x, dh.astype(x.dtype), jnp.asarray(w, jnp.float32))  # (inside shard_map: one varying type)
    dx, data, scale, dw = swiglu_backward_p.bind(x, dh, w)
    return dx, (data, scale), dw


# ---- the reference: the specification, and the lowering wherever the kernel does not run ----

def _reference(x, dh, w):
    g, u = _split(x)
    s = jax.nn.sigmoid(g)
    act = g * s
    dh = dh.astype(jnp.float32)
    dhw = dh * w[:, None]
    dx = jnp.concatenate([dhw * u * (s * (1.0 + g * (1.0 - s))), dhw * act], axis=-1).astype(x.dtype)
    data, scale = per_token_cast_to_fp8(dx)
    return dx, data, scale, jnp.sum(dh * act * u, axis=-1)


def _shapes(x):
    rows, cols = x.shape
    return (((rows, cols), x.dtype), ((rows, cols), jnp.float8_e4m3fn), ((rows, ceil_div(cols, BLOCK)), jnp.float32),
            ((rows,), jnp.float32))


def _kernel_applies(x) -> bool:
    return x.dtype == jnp.bfloat16 and x.shape[1] % (2 * BLOCK) == 0


def _kernel(x, dh, w):
    rows, cols = x.shape
    dx, data, scale, dw = _shapes(x)  # (the handler's results: out and scale, then dx and dw)
    results = tuple(jax.ShapeDtypeStruct((1,) + s, d) for s, d in (data, scale, dx, dw))
    data, scale, dx, dw = jax.ffi.ffi_call(QUANTIZE_T_TARGET, results)(
        x[None], dh[None], w[None], batch=1, rows=rows, cols=cols, rblocks=ceil_div(rows, BLOCK), x_rows=rows,
        arch=runtime.ARCH, in_f32=False, per_block=False, block_map=False, row_map=False, untransposed=False,
        rowwise=False, swiglu_backward=True)
    return dx[0], data[0], scale[0], dw[0]


# ---- the primitive ----

swiglu_backward_p = Primitive("jax_deepgemm_swiglu_backward")
swiglu_backward_p.multiple_results = True
swiglu_backward_p.def_impl(partial(xla.apply_primitive, swiglu_backward_p))


@swiglu_backward_p.def_abstract_eval
def _abstract_eval(x, dh, w):
    return [_shaped((x, dh, w), shape, dtype) for shape, dtype in _shapes(x)]


def _cuda_rule():
    reference_rule = mlir.lower_fun(_reference, multiple_results=True)
    kernel_rule = mlir.lower_fun(_kernel, multiple_results=True)

    def rule(ctx, x, dh, w):
        if _kernel_applies(ctx.avals_in[0]) and not _sharded_program(ctx) and runtime.use_kernels():
            return kernel_rule(ctx, x, dh, w)
        return reference_rule(ctx, x, dh, w)

    return rule


mlir.register_lowering(swiglu_backward_p, mlir.lower_fun(_reference, multiple_results=True))
mlir.register_lowering(swiglu_backward_p, _cuda_rule(), platform="cuda")


def _batch_rule(args, dims):
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    x, dh, w = (jnp.moveaxis(a, d, 0) if d is not None else jnp.broadcast_to(a, (size,) + a.shape)
                for a, d in zip(args, dims))
    out = swiglu_backward_p.bind(x.reshape((-1, x.shape[-1])), dh.reshape((-1, dh.shape[-1])), w.reshape(-1))
    return [o.reshape((size, -1) + o.shape[1:]) for o in out], [0] * len(out)


batching.primitive_batchers[swiglu_backward_p] = _batch_rule
