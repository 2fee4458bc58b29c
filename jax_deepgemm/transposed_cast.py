"""The FP8 quantizations of the training paths in one pass: `transposed_cast_to_fp8(x)` equals
`per_token_cast_to_fp8(x.T)` (or `per_block_cast_to_fp8(x.T)`) bit for bit, optionally of a row gather x[row_index]
without its copy, and after moving groups of rows to 128-row blocks (`group_block_map`); `token_cast_to_fp8(x)`
equals `per_token_cast_to_fp8(x)` (x's own 1x128 quantization, the forward's and the dgrad's A operand), optionally of
x[row_index] too.

The FP8 training paths quantize transposed operands every step: the weight W [K, N] as W^T's 128x128 blocks, and the
weight gradient's token-major operands X^T and grad^T, 1x128 along the tokens (k-grouped: each group's tokens from a
128-row block on). As XLA fusions these take an amax pass and a transposing cast pass (sometimes a transpose of the
FP8 result too); on sm_90 with the kernels this is one kernel (`cuda/jax_deepgemm/fp8_quantize.cuh`) that reads x
once: 4.3 TB/s from float32, 2.8-3.3 TB/s from bfloat16, 1.8-14x faster than the fusions (NVIDIA H200,
2026-11-29, benchmarks/NOTES.md 100, 101). The per-token quantization of the GEMMs' A operands takes the same two
passes as fusions, and its kernel one (`rowwise`). fp8_dot and ragged_dot use them (differentiable.py).

One primitive with its own rules, internal to the package:
  lowering   on CUDA with the kernels, for bfloat16 / float32 x whose rows are whole 16-byte vectors (C a
             multiple of 8 / 4), the FFI call "jdg_fp8_quantize_t"; in a jit program over several devices (GSPMD /
             Shardy) and everywhere else, the reference below, which XLA partitions op by op as it did the helpers;
  batching   leading axes are the kernel's batch (one map for all); batched maps take the reference under vmap;
  no JVP     its callers are custom VJPs, which never differentiate their quantizations.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir, xla

from . import runtime
from .kernels import QUANTIZE_T_TARGET
from .primitives import _shaped, match_vma, no_derivative
from .quantization import BLOCK, ceil_div, per_block_cast_to_fp8, per_token_cast_to_fp8
from .reference import ends_at_or_before, segment_ends
from .sharding import _sharded_program

_KERNEL_DTYPES = (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float32))


def _row_index(fn, row_index) -> tuple:
    """() or (row_index as int32,)."""
    if row_index is None:
        return ()
    if jnp.ndim(row_index) != 1 or not jnp.issubdtype(jnp.result_type(row_index), jnp.integer):
        raise ValueError(f"{fn}: row_index must be an int32 [R'] array, got {jnp.result_type(row_index)} "
                         f"{jnp.shape(row_index)}")
    return (jnp.asarray(row_index, jnp.int32),)


def _check_x(fn, x):
    if jnp.ndim(x) < 2:
        raise ValueError(f"{fn}: x must be [..., R, C] (rank >= 2), got shape {jnp.shape(x)}")
    if not jnp.issubdtype(jnp.result_type(x), jnp.floating):
        raise TypeError(f"{fn}: x must be a floating array, got {jnp.result_type(x)}")


def transposed_cast_to_fp8(x, *, per_block=False, block_map=None, untransposed=False, row_index=None):
    """x [..., R, C] (floating) -> the quantization of x^T: (data float8_e4m3fn [..., C, Rp], scale float32).

    row_index: None, or int32 [R'] to quantize the rows x[..., row_index, :] instead (R = R' below; an index outside
    [0, x.shape[-2]) reads a row of zeros): a gather's transposed quantization without the gathered copy.

    per_block=False: one scale per row of x^T and 128 columns, [..., C, Rp / 128] (per_token_cast_to_fp8(x^T));
    per_block=True: one per 128x128 block, [..., ceil(C / 128), Rp / 128] (per_block_cast_to_fp8(x^T)).
    block_map: None (Rp = R), or (block_src, block_rows) int32 [nb] from `group_block_map`: block b of x^T's
    columns holds rows block_src[b] .. block_src[b] + block_rows[b] - 1 of x, then zeros (Rp = 128 nb). Any values
    are clamped into x: at most 128 rows, none past its end.
    untransposed=True (per_block, no block_map): also x's own 128x128 quantization, float8_e4m3fn [..., R, C], as a
    third result (its scales are scale's transpose): a weight's operand in both GEMMs, forward and dgrad, in one pass
    (an FP8 transpose of data instead cost an H200 153 us per MoE step, NOTES 101)."""
    fn = "transposed_cast_to_fp8"
    _check_x(fn, x)
    maps = () if block_map is None else tuple(block_map)
    if untransposed and (not per_block or maps or row_index is not None):
        raise ValueError(f"{fn}: untransposed=True needs per_block=True, no block_map and no row_index")
    rows = _row_index(fn, row_index)
    if maps and (len(maps) != 2 or any(jnp.ndim(m) != 1 or not jnp.issubdtype(jnp.result_type(m), jnp.integer)
                                       for m in maps) or jnp.shape(maps[0]) != jnp.shape(maps[1])):
        raise ValueError(f"{fn}: block_map must be (block_src, block_rows), two int32 [nb] arrays, got "
                         f"{[(jnp.result_type(m), jnp.shape(m)) for m in maps]}")
    maps = rows + tuple(jnp.asarray(m, jnp.int32) for m in maps)
    lead, (r, c) = x.shape[:-2], x.shape[-2:]
    x, *maps = match_vma(x.reshape((math.prod(lead), r, c)), *maps)  # (inside shard_map: one varying type)
    out = quantize_t_p.bind(x, *maps, per_block=bool(per_block), untransposed=bool(untransposed),
                            row_map=bool(rows), rowwise=False)
    return tuple(o.reshape(lead + o.shape[1:]) for o in out)


def token_cast_to_fp8(x, *, row_index=None):
    """x [..., R, C] (floating) -> per_token_cast_to_fp8 of each [R, C] matrix, bit for bit: (data float8_e4m3fn
    [..., R, C], scale float32 [..., R, ceil(C / 128)]), in one pass over x on sm_90 with the kernels.

    row_index: None, or int32 [R'] to quantize the rows x[..., row_index, :] instead (R = R' above; an index outside
    [0, x.shape[-2]) reads a row of zeros): a gather's quantization without the gathered copy, as
    transposed_cast_to_fp8's."""
    fn = "token_cast_to_fp8"
    _check_x(fn, x)
    rows = _row_index(fn, row_index)
    if jax.sharding.get_abstract_mesh().explicit_axes:
        # Explicit sharding types: the helper's ops carry x's sharding to the results (the primitive types them
        # replicated), and a program over several devices lowers to them in any case (see the lowering).
        if rows:
            picked = _picked_rows(x.reshape((math.prod(x.shape[:-2]),) + x.shape[-2:]), rows[0])  # (x may be empty)
            x = picked.reshape(x.shape[:-2] + picked.shape[-2:])
        cast = per_token_cast_to_fp8
        for _ in range(x.ndim - 2):
            cast = jax.vmap(cast)
        return cast(x)
    lead, (r, c) = x.shape[:-2], x.shape[-2:]
    x, *rows = match_vma(x.reshape((math.prod(lead), r, c)), *rows)
    out = quantize_t_p.bind(x, *rows, per_block=False, untransposed=False, row_map=bool(rows), rowwise=True)
    return tuple(o.reshape(lead + o.shape[1:]) for o in out)


def group_block_map(group_sizes: jax.Array, m: int):
    """Each group of m rows (group_sizes [G], clamped as the grouped GEMMs clamp them) from a 128-row block on:
    (block_src, block_rows, padded_sizes) for `transposed_cast_to_fp8`, over ceil(m / 128) + G blocks, the static
    bound on sum(padded_sizes); padded_sizes [G] are the group sizes rounded up to 128, the k-grouped GEMM's."""
    g = group_sizes.shape[0]
    ends = segment_ends(group_sizes, m)
    sizes = jnp.diff(ends, prepend=0)
    padded_sizes = (sizes + BLOCK - 1) // BLOCK * BLOCK
    padded_ends = jnp.cumsum(padded_sizes)
    blocks = ceil_div(m, BLOCK) + g
    first = jnp.arange(blocks, dtype=padded_ends.dtype) * BLOCK  # each block's first padded row
    group = jnp.minimum(ends_at_or_before(padded_ends, blocks, BLOCK), g - 1)  # past the last group: empty
    offset = first - (padded_ends - padded_sizes)[group]
    rows = jnp.where(first < padded_ends[-1], jnp.clip(sizes[group] - offset, 0, BLOCK), 0)
    src = (ends - sizes)[group] + offset
    return src.astype(jnp.int32), rows.astype(jnp.int32), padded_sizes.astype(jnp.int32)


# ---- the reference: the specification, and the lowering wherever the kernel does not run ----

def _gather_blocks(x, block_src, block_rows):
    """x [B, R, C] -> [B, 128 nb, C]: block b holds rows block_src[b] .. (clamped as the kernel clamps), then zeros."""
    r = x.shape[1]
    count = jnp.minimum(jnp.clip(block_rows, 0, BLOCK), r)
    src = jnp.clip(block_src, 0, r - count)
    offset = jnp.arange(BLOCK, dtype=jnp.int32)
    valid = (offset[None, :] < count[:, None]).reshape(-1)
    rows = jnp.where(valid, (src[:, None] + offset[None, :]).reshape(-1), 0)
    if r == 0:
        return jnp.zeros((x.shape[0], rows.shape[0], x.shape[2]), x.dtype)
    return jnp.where(valid[None, :, None], x[:, rows, :], jnp.zeros((), x.dtype))


def _picked_rows(x, row_index):
    """x [B, R, C] -> x[:, row_index] [B, R', C], zero rows where an index is outside [0, R)."""
    inside = (row_index >= 0) & (row_index < x.shape[1])
    if x.shape[1] == 0:
        return jnp.zeros((x.shape[0], row_index.shape[0], x.shape[2]), x.dtype)
    return jnp.where(inside[None, :, None], x[:, jnp.where(inside, row_index, 0)], jnp.zeros((), x.dtype))


def _reference(x, *maps, per_block, untransposed, row_map, rowwise):
    if row_map:
        x, maps = _picked_rows(x, maps[0]), maps[1:]
    if rowwise:
        return jax.vmap(per_token_cast_to_fp8)(x)
    if maps:
        x = _gather_blocks(x, *maps)
    cast = per_block_cast_to_fp8 if per_block else per_token_cast_to_fp8
    data, scale = jax.vmap(cast)(jnp.swapaxes(x, 1, 2))
    # (the untransposed data is data's transpose: the same quotients of the same block scales)
    return (data, scale) + ((jnp.swapaxes(data, 1, 2),) if untransposed else ())


def _shapes(x, *maps, per_block, untransposed, row_map, rowwise):
    b, r, c = x.shape
    if row_map:
        r, maps = maps[0].shape[0], maps[1:]
    if rowwise:
        return ((b, r, c), jnp.float8_e4m3fn), ((b, r, ceil_div(c, BLOCK)), jnp.float32)
    rp = maps[0].shape[0] * BLOCK if maps else r
    scale_rows = ceil_div(c, BLOCK) if per_block else c
    shapes = ((b, c, rp), jnp.float8_e4m3fn), ((b, scale_rows, ceil_div(rp, BLOCK)), jnp.float32)
    return shapes + ((((b, r, c), jnp.float8_e4m3fn),) if untransposed else ())


# ---- the kernel ----

def _kernel(x, *maps, per_block, untransposed, row_map, rowwise):
    b, x_rows, c = x.shape
    shapes = _shapes(x, *maps, per_block=per_block, untransposed=untransposed, row_map=row_map, rowwise=rowwise)
    r = maps[0].shape[0] if row_map else x_rows
    rblocks = ceil_div(r, BLOCK) if rowwise else shapes[1][0][-1]
    # The per-column scales come out of the kernel as [b, rblocks, c], the layout the GEMMs read them in (each
    # CTA's 128 scales one 512-byte store; the GEMMs' own transpose of scale then cancels this one in XLA).
    per_column = not (rowwise or per_block)
    if per_column:
        shapes = (shapes[0], ((b, rblocks, c), jnp.float32)) + shapes[2:]
    call = jax.ffi.ffi_call(QUANTIZE_T_TARGET, tuple(jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in shapes))
    out = call(x, *maps, batch=b, rows=r, cols=c, rblocks=rblocks, x_rows=x_rows, arch=runtime.ARCH,
               in_f32=x.dtype == jnp.float32, per_block=per_block, block_map=len(maps) > int(row_map),
               row_map=row_map, untransposed=untransposed, rowwise=rowwise, swiglu_forward=False,
               swiglu_backward=False)
    return (out[0], jnp.swapaxes(out[1], 1, 2)) + tuple(out[2:]) if per_column else out


# ---- the primitive ----

quantize_t_p = Primitive("jax_deepgemm_quantize_t")
quantize_t_p.multiple_results = True
quantize_t_p.def_impl(partial(xla.apply_primitive, quantize_t_p))


@quantize_t_p.def_abstract_eval
def _abstract_eval(x, *maps, **params):
    avals = (x, *maps)
    return [_shaped(avals, shape, dtype) for shape, dtype in _shapes(x, *maps, **params)]


def _cuda_rule():
    reference_rule = mlir.lower_fun(_reference, multiple_results=True)
    kernel_rule = mlir.lower_fun(_kernel, multiple_results=True)

    def rule(ctx, *args, **params):
        x = ctx.avals_in[0]
        # (the kernel reads rows as 16-byte vectors: 8 bfloat16 or 4 float32 columns at a time; use_kernels first:
        # it takes symbolic shapes, which the test below cannot)
        if runtime.use_kernels(ctx.avals_in) and not _sharded_program(ctx):
            if x.dtype in _KERNEL_DTYPES and x.shape[-1] % (16 // x.dtype.itemsize) == 0:
                return kernel_rule(ctx, *args, **params)
        return reference_rule(ctx, *args, **params)

    return rule


mlir.register_lowering(quantize_t_p, mlir.lower_fun(_reference, multiple_results=True))
mlir.register_lowering(quantize_t_p, _cuda_rule(), platform="cuda")


def _batch_rule(args, dims, **params):
    x, *maps = args
    x_dim, *map_dims = dims
    if all(d is None for d in map_dims):  # (None: not batched)
        x = jnp.moveaxis(x, x_dim, 0)
        out = quantize_t_p.bind(x.reshape((x.shape[0] * x.shape[1],) + x.shape[2:]), *maps, **params)
        lead = x.shape[:2]
        return [o.reshape(lead + o.shape[1:]) for o in out], [0] * len(out)
    out = jax.vmap(partial(_reference, **params), in_axes=tuple(dims))(*args)
    return list(out), [0] * len(out)


batching.primitive_batchers[quantize_t_p] = _batch_rule
ad.primitive_jvps[quantize_t_p] = no_derivative(quantize_t_p)
