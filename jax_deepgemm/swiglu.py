"""The MoE experts' weighted SwiGLU, h = silu(g) * u * w for x = [g | u] and one weight w per row, forward and
backward, each fused with the per-token FP8 quantization that a GEMM takes of its result.

`swiglu_fp8(x, w)` -> (h, (data, scale)):
  h      silu(g) * u * w in x.dtype, computed in float32 and rounded once (`swiglu`'s value);
  data, scale  per_token_cast_to_fp8(h), bit for bit (of h as returned): the second expert GEMM's A operand.
`swiglu_backward(x, dh, w)` -> (dx, (data, scale), dw):
  dx     [g | u]'s gradient in x.dtype: dg = dh * w * u * s * (1 + g * (1 - s)) and du = dh * w * silu(g), s =
         sigmoid(g), computed in float32 and rounded once;
  data, scale  per_token_cast_to_fp8(dx), bit for bit (of dx as returned): the dgrad GEMM's A operand;
  dw     float32 [rows]: sum over the row of dh * silu(g) * u, w's gradient.
As XLA fusions these are a pass over x (h) and the quantization's pass over h, and two passes over x and dh (dx, dw)
and the quantization's pass over dx; on sm_90 with the kernels, for bfloat16 x (and dh) with F a multiple of 128, one
kernel each reads its operands once (`cuda/jax_deepgemm/swiglu.cuh`). (Elsewhere swiglu_fp8 quantizes h with
`token_cast_to_fp8`, the rowwise kernel where that applies.)
Their silu uses the GPU's fast exponential, so h, dx and dw differ from the references below by a few float32
roundings: tests/test_swiglu.py holds them to a float64 oracle (h and dx within one unit in their last place plus
2^-18 of their terms' magnitudes, dw within (F + 64) float32 roundings of its terms' magnitudes), and their FP8 results
to the helper's of their own h and dx, bit for bit.

Two primitives, internal to the package (the MoE layer's `dispatched_swiglu` and `moe_ffn`, differentiable.py, take
them):
  lowering   on CUDA with the kernels where the kernel applies (above), outside programs over several devices: the
             FFI call "jdg_fp8_quantize_t" in its swiglu_forward / swiglu_backward mode; everywhere else the
             references below;
  batching   every row is its own problem: batch axes become rows;
  no JVP     swiglu_fp8's caller is a custom VJP's forward rule (its h has the gradient of `swiglu`), swiglu_backward's
             a backward rule.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir, xla

from . import runtime
from .kernels import QUANTIZE_T_TARGET
from .primitives import _shaped, match_vma, no_derivative
from .quantization import BLOCK, ceil_div, per_token_cast_to_fp8
from .sharding import _sharded_program
from .transposed_cast import token_cast_to_fp8


def _split(x):
    g, u = jnp.split(x.astype(jnp.float32), 2, axis=-1)
    return g, u


def swiglu(x, w, dtype):
    """h = silu(g) * u * w [rows, F] in dtype, for x = [g | u] [rows, 2F] and w [rows] (float32 throughout)."""
    g, u = _split(x)
    return (jax.nn.silu(g) * u * w.astype(jnp.float32)[:, None]).astype(dtype)


def _check_rows(fn: str, x, w, dh=None):
    """x [rows, 2F], w [rows] (and dh [rows, F]), floating, or a ValueError / TypeError naming the argument."""
    if jnp.ndim(x) != 2 or x.shape[1] % 2:
        raise ValueError(f"{fn}: x must be [rows, 2F] (gate and up side by side), got shape {jnp.shape(x)}")
    rows, f = x.shape[0], x.shape[1] // 2
    if dh is not None and jnp.shape(dh) != (rows, f):
        raise ValueError(f"{fn}: dh must be [rows, F] = [{rows}, {f}] for x {tuple(x.shape)}, got {jnp.shape(dh)}")
    if jnp.shape(w) != (rows,):
        raise ValueError(f"{fn}: w must be [rows] = [{rows}], got shape {jnp.shape(w)}")
    for name, a in (("x", x), ("dh", dh), ("w", w)):
        if a is not None and not jnp.issubdtype(jnp.result_type(a), jnp.floating):
            raise TypeError(f"{fn}: {name} must be a floating array, got {jnp.result_type(a)}")


def swiglu_fp8(x, w):
    """x = [g | u] [rows, 2F], w [rows] -> (h [rows, F] in x.dtype, (data float8_e4m3fn [rows, F], scale float32
    [rows, ceil(F / 128)])); see the module's text."""
    _check_rows("swiglu_fp8", x, w)
    if not _kernel_applies(x):  # (the SwiGLU in XLA, h's quantization still the rowwise kernel where that applies)
        h = swiglu(x, w, x.dtype)
        return h, token_cast_to_fp8(h)
    x, w = match_vma(x, jnp.asarray(w, jnp.float32))  # (inside shard_map: one varying type)
    h, data, scale = swiglu_forward_p.bind(x, w)
    return h, (data, scale)


def swiglu_backward(x, dh, w):
    """x = [g | u] [rows, 2F], dh [rows, F] (h's gradient, taken in x.dtype), w [rows] -> (dx [rows, 2F] in x.dtype,
    (data float8_e4m3fn [rows, 2F], scale float32 [rows, ceil(2F / 128)]), dw float32 [rows]); see the module's
    text."""
    _check_rows("swiglu_backward", x, w, dh)
    x, dh, w = match_vma(x, dh.astype(x.dtype), jnp.asarray(w, jnp.float32))  # (inside shard_map: one varying type)
    dx, data, scale, dw = swiglu_backward_p.bind(x, dh, w)
    return dx, (data, scale), dw


# ---- the references: the specification, and the lowerings wherever the kernels do not run ----

def _forward_reference(x, w):
    h = swiglu(x, w, x.dtype)
    return (h, *per_token_cast_to_fp8(h))


def _backward_reference(x, dh, w):
    g, u = _split(x)
    s = jax.nn.sigmoid(g)
    act = g * s
    dh = dh.astype(jnp.float32)
    dhw = dh * w[:, None]
    dx = jnp.concatenate([dhw * u * (s * (1.0 + g * (1.0 - s))), dhw * act], axis=-1).astype(x.dtype)
    data, scale = per_token_cast_to_fp8(dx)
    return dx, data, scale, jnp.sum(dh * act * u, axis=-1)


def _forward_shapes(x, w):
    rows, f = x.shape[0], x.shape[1] // 2
    return ((rows, f), x.dtype), ((rows, f), jnp.float8_e4m3fn), ((rows, ceil_div(f, BLOCK)), jnp.float32)


def _backward_shapes(x, dh, w):
    rows, cols = x.shape
    return (((rows, cols), x.dtype), ((rows, cols), jnp.float8_e4m3fn), ((rows, ceil_div(cols, BLOCK)), jnp.float32),
            ((rows,), jnp.float32))


def _kernel_applies(x) -> bool:
    return x.dtype == jnp.bfloat16 and x.shape[1] % (2 * BLOCK) == 0


def _ffi_call(x, operands, results, mode: str):
    """The quantization kernel's call in a SwiGLU mode on batch 1: `results` in the handler's order."""
    rows, cols = x.shape
    results = tuple(jax.ShapeDtypeStruct((1,) + s, d) for s, d in results)
    out = jax.ffi.ffi_call(QUANTIZE_T_TARGET, results)(
        x[None], *(a[None] for a in operands), batch=1, rows=rows, cols=cols, rblocks=ceil_div(rows, BLOCK),
        x_rows=rows, arch=runtime.ARCH, in_f32=False, per_block=False, block_map=False, row_map=False,
        untransposed=False, rowwise=False, swiglu_forward=mode == "forward", swiglu_backward=mode == "backward")
    return [r[0] for r in out]


def _forward_kernel(x, w):
    h, data, scale = _forward_shapes(x, w)
    data, scale, h = _ffi_call(x, (w,), (data, scale, h), "forward")  # (the handler's results: out, scale, then h)
    return h, data, scale


def _backward_kernel(x, dh, w):
    dx, data, scale, dw = _backward_shapes(x, dh, w)
    data, scale, dx, dw = _ffi_call(x, (dh, w), (data, scale, dx, dw), "backward")  # (out, scale, then dx, dw)
    return dx, data, scale, dw


# ---- the primitives ----

def _primitive(name: str, shapes, reference, kernel) -> Primitive:
    """A multiple-result primitive over rows: abstract eval from `shapes`, the kernel's lowering on CUDA where it
    applies (else the reference's), batch axes folded into the rows."""
    p = Primitive(name)
    p.multiple_results = True
    p.def_impl(partial(xla.apply_primitive, p))
    p.def_abstract_eval(lambda *avals: [_shaped(avals, shape, dtype) for shape, dtype in shapes(*avals)])
    reference_rule = mlir.lower_fun(reference, multiple_results=True)
    kernel_rule = mlir.lower_fun(kernel, multiple_results=True)

    def cuda_rule(ctx, *args):
        # (use_kernels first: it takes symbolic shapes, which _kernel_applies cannot)
        if runtime.use_kernels(ctx.avals_in) and _kernel_applies(ctx.avals_in[0]) and not _sharded_program(ctx):
            return kernel_rule(ctx, *args)
        return reference_rule(ctx, *args)

    mlir.register_lowering(p, reference_rule)
    mlir.register_lowering(p, cuda_rule, platform="cuda")

    def batch_rule(args, dims):
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        args = [jnp.moveaxis(a, d, 0) if d is not None else jnp.broadcast_to(a, (size,) + a.shape)
                for a, d in zip(args, dims)]
        rows = args[0].shape[1]  # (each element's; explicit, as a batch of none leaves -1 undefined)
        out = p.bind(*(a.reshape((size * rows,) + a.shape[2:]) for a in args))
        return [o.reshape((size, rows) + o.shape[1:]) for o in out], [0] * len(out)

    batching.primitive_batchers[p] = batch_rule
    ad.primitive_jvps[p] = no_derivative(p)
    return p


swiglu_forward_p = _primitive("jax_deepgemm_swiglu_forward", _forward_shapes, _forward_reference, _forward_kernel)
swiglu_backward_p = _primitive("jax_deepgemm_swiglu_backward", _backward_shapes, _backward_reference,
                               _backward_kernel)
