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

`swiglu_backward_grouped(x, dh, w, group_sizes)` -> ((data, scale), (data_t, scale_t), dw): the same without dx,
where the MoE weight gradient wants dx's token-major quantization as well: (data, scale) and dw as above, (data_t,
scale_t) = transposed_cast_to_fp8(dx, block_map=group_block_map(group_sizes, rows)[:2]), bit for bit. Its kernel
(fp8_quantize.cuh with JDG_Q_SWIGLU) forms dx's 128 x 128 tiles from x and dh and quantizes each both ways: dx
is neither written nor read back.

Two primitives, internal to the package (the MoE layer's `dispatched_swiglu`, differentiable.py, takes them):
  lowering   on CUDA with the kernels where the kernel applies (above), outside programs over several devices: the
             FFI call "jdg_fp8_quantize_t" in its swiglu_backward mode (with a block map: the grouped one);
             everywhere else the reference below;
  batching   every row is its own problem: batch axes become rows (the grouped one: its reference under vmap);
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
from .reference import segment_ends
from .sharding import _sharded_program
from .transposed_cast import group_block_map
from .transposed_cast import _reference as _transposed_reference


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
    _check("swiglu_backward", x, dh, w)
    x, dh, w = match_vma(x, dh.astype(x.dtype), jnp.asarray(w, jnp.float32))  # (inside shard_map: one varying type)
    dx, data, scale, dw = swiglu_backward_p.bind(x, dh, w)
    return dx, (data, scale), dw


def _check(fn, x, dh, w):
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


def swiglu_backward_grouped(x, dh, w, group_sizes):
    """x, dh, w as swiglu_backward's, group_sizes int32 [G] (G >= 1; any values, clamped as the grouped GEMMs clamp
    them) -> ((data [rows, 2F], scale [rows, ceil(2F / 128)]), (data_t float8_e4m3fn [2F, 128 nb], scale_t float32
    [2F, nb]), dw [rows]) with nb = ceil(rows / 128) + G; see the module's text."""
    fn = "swiglu_backward_grouped"
    _check(fn, x, dh, w)
    if jnp.ndim(group_sizes) != 1 or jnp.shape(group_sizes)[0] < 1 or \
            not jnp.issubdtype(jnp.result_type(group_sizes), jnp.integer):
        raise ValueError(f"{fn}: group_sizes must be an int32 [G] array with G >= 1, got "
                         f"{jnp.result_type(group_sizes)} {jnp.shape(group_sizes)}")
    x, dh, w, group_sizes = match_vma(x, dh.astype(x.dtype), jnp.asarray(w, jnp.float32),
                                      jnp.asarray(group_sizes, jnp.int32))
    data, scale, data_t, scale_t, dw_partial = swiglu_backward_grouped_p.bind(x, dh, w, group_sizes)
    return (data, scale), (data_t, scale_t), jnp.sum(dw_partial, axis=-1)


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


# ---- the grouped form ----

def _dw_partial(x, dh):
    """dh * silu(g) * u summed over each 128 columns of dh: [rows, ceil(F / 128)] float32."""
    g, u = _split(x)
    terms = dh.astype(jnp.float32) * jax.nn.silu(g) * u
    rows, f = terms.shape
    terms = jnp.pad(terms, ((0, 0), (0, ceil_div(f, BLOCK) * BLOCK - f)))
    return jnp.sum(terms.reshape(rows, ceil_div(f, BLOCK), BLOCK), axis=-1)


def _grouped_reference(x, dh, w, group_sizes):
    dx, data, scale, _ = _reference(x, dh, w)
    block_src, block_rows, _ = group_block_map(group_sizes, x.shape[0])
    data_t, scale_t = _transposed_reference(dx[None], block_src, block_rows, per_block=False, untransposed=False,
                                            row_map=False, rowwise=False)
    return data, scale, data_t[0], scale_t[0], _dw_partial(x, dh)


def _grouped_shapes(x, group_sizes):
    rows, cols = x.shape
    nb = ceil_div(rows, BLOCK) + group_sizes.shape[0]
    return (((rows, cols), jnp.float8_e4m3fn), ((rows, ceil_div(cols, BLOCK)), jnp.float32),
            ((cols, BLOCK * nb), jnp.float8_e4m3fn), ((cols, nb), jnp.float32),
            ((rows, ceil_div(cols // 2, BLOCK)), jnp.float32))


def _grouped_kernel(x, dh, w, group_sizes):
    rows, cols = x.shape
    block_src, block_rows, _ = group_block_map(group_sizes, rows)
    cover_end = segment_ends(group_sizes, rows)[-1:].astype(jnp.int32)  # the rows the groups hold: [0, cover_end)
    nb = block_src.shape[0]
    data, scale, data_t, _, dw = _grouped_shapes(x, group_sizes)
    # (the handler's results: dx^T's out and scale, the latter as the GEMMs read it [nb, 2F]; then the rowwise ones)
    results = tuple(jax.ShapeDtypeStruct((1,) + s, d) for s, d in (data_t, ((nb, cols), jnp.float32), data, scale, dw))
    data_t, scale_t, data, scale, dw = jax.ffi.ffi_call(QUANTIZE_T_TARGET, results)(
        x[None], dh[None], w[None], block_src, block_rows, cover_end, batch=1, rows=rows, cols=cols, rblocks=nb,
        x_rows=rows, arch=runtime.ARCH, in_f32=False, per_block=False, block_map=True, row_map=False,
        untransposed=False, rowwise=False, swiglu_backward=True)
    return data[0], scale[0], data_t[0], scale_t[0].T, dw[0]


swiglu_backward_grouped_p = Primitive("jax_deepgemm_swiglu_backward_grouped")
swiglu_backward_grouped_p.multiple_results = True
swiglu_backward_grouped_p.def_impl(partial(xla.apply_primitive, swiglu_backward_grouped_p))


@swiglu_backward_grouped_p.def_abstract_eval
def _grouped_abstract_eval(x, dh, w, group_sizes):
    return [_shaped((x, dh, w, group_sizes), shape, dtype) for shape, dtype in _grouped_shapes(x, group_sizes)]


def _grouped_cuda_rule():
    reference_rule = mlir.lower_fun(_grouped_reference, multiple_results=True)
    kernel_rule = mlir.lower_fun(_grouped_kernel, multiple_results=True)

    def rule(ctx, *args):
        if _kernel_applies(ctx.avals_in[0]) and not _sharded_program(ctx) and runtime.use_kernels():
            return kernel_rule(ctx, *args)
        return reference_rule(ctx, *args)

    return rule


mlir.register_lowering(swiglu_backward_grouped_p, mlir.lower_fun(_grouped_reference, multiple_results=True))
mlir.register_lowering(swiglu_backward_grouped_p, _grouped_cuda_rule(), platform="cuda")


def _grouped_batch_rule(args, dims):
    # (each batch entry has its own groups, so its own block map: the reference, vectorized)
    out = jax.vmap(_grouped_reference, in_axes=tuple(dims))(*args)
    return list(out), [0] * len(out)


batching.primitive_batchers[swiglu_backward_grouped_p] = _grouped_batch_rule
