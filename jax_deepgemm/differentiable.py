"""Differentiable FP8 products for training: `fp8_dot` and `ragged_dot`, with FP8 backward passes.

Forward: activations are quantized per token (1x128), weights per 128x128 block, and the FP8 kernel runs.
Backward, as in DeepSeek-V3 training:
  dgrad  grad @ W^T with the same FP8 GEMM: the output gradient quantized per token, the weight's 128x128
         quantization reused transposed (a 128x128 block of W^T is a block of W with its scale; the forward's
         quantization kernel writes both layouts);
  wgrad  X^T @ grad with both operands quantized 1x128 along the token dimension: the 1D1D dense GEMM, or the
         k-grouped GEMM for ragged_dot (each group's tokens from a 128-row block on, so that no scale block straddles
         two groups).
The transposed operands (W^T, X^T, grad^T; ragged_dot's through a block map of its groups) are quantized by
`transposed_cast_to_fp8`: one kernel on sm_90, the helpers' exact result. On an H200 it took ragged_dot's MoE training
step from 8.6 to 6.0 ms of kernels, folding the MoE dispatch into the operands (dispatched_ragged_dot) to 5.7, and
its combine (combined_ragged_dot) to 5.5 (2026-11-29; benchmarks/NOTES.md 100-103). The per-token quantizations of
the GEMMs' A operands (x, grad) take `token_cast_to_fp8`: per_token_cast_to_fp8's exact result, one kernel on sm_90.
The MoE layer's first GEMM and its weighted SwiGLU are one step (`dispatched_swiglu`), whose backward forms the
SwiGLU's gradients and the dgrad's FP8 operand in one kernel (swiglu.py): the step -73 us on an H200 (2026-12-01,
benchmarks/NOTES.md 125). That step and the combined second GEMM are one custom VJP (`moe_ffn`), whose forward forms h
and the second GEMM's FP8 operand in one kernel: -20 us on an H200 (2026-12-01, benchmarks/NOTES.md 132).
"""

from __future__ import annotations

from functools import lru_cache, partial, wraps
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.ad_checkpoint import checkpoint_name
from jax.custom_derivatives import SymbolicZero

from . import _checks as check
from ._permutation import sum_token_slots
from ._types import ArrayLike, DTypeLike, QuantizedPair
from .gemm import fp8_gemm_nt
from .grouped import fp8_grouped_gemm_nt, k_grouped_fp8_gemm_nt_contiguous
from .primitives import auto_axes_if_explicit, distinct_axes, match_vma, operand_spec
from .reference import ragged_row_groups
from .swiglu import swiglu, swiglu_backward, swiglu_fp8
from .transposed_cast import group_block_map, token_cast_to_fp8, transposed_cast_to_fp8


# The names of fp8_dot's and ragged_dot's results for jax.checkpoint policies (jax.checkpoint_policies'
# save_only_these_names & co.): the GEMMs are our primitives, not dot_general, so jax's dots_saveable policies do not
# see them.
CHECKPOINT_NAMES = ("jax_deepgemm.fp8_dot", "jax_deepgemm.ragged_dot")

# jax.checkpoint_policies.dots_saveable, and the results of fp8_dot and ragged_dot: under jax.checkpoint the backward
# pass then runs no FP8 GEMM of the forward again (it re-quantizes the saved inputs, elementwise work).
fp8_dots_saveable = jax.checkpoint_policies.save_from_both_policies(
    jax.checkpoint_policies.dots_saveable, jax.checkpoint_policies.save_only_these_names(*CHECKPOINT_NAMES))


def _gemm_dtype(dtype) -> jnp.dtype:
    """The kernels write bf16 or f32: f32 results stay f32, everything else goes through bf16."""
    return jnp.dtype(jnp.float32) if jnp.dtype(dtype) == jnp.float32 else jnp.dtype(jnp.bfloat16)


def _wgrad_dtype(dtype) -> jnp.dtype:
    """What the weight-gradient kernels write: bf16 for bf16 weights (the kernel rounds its float32 sums once, the
    very value of rounding a float32 result, with half the bytes written and no conversion pass after it), float32
    for every other dtype (a bf16 detour would round twice)."""
    return jnp.dtype(jnp.bfloat16) if jnp.dtype(dtype) == jnp.bfloat16 else jnp.dtype(jnp.float32)


def _transposed(pair):
    """The 128x128 quantization of W^T from that of W: transpose data and block scales."""
    data, scale = pair
    return jnp.swapaxes(data, -1, -2), jnp.swapaxes(scale, -1, -2)


# ---------------------------------------------------------------- fp8_dot

def fp8_dot_result_spec(x, w, *_, **__):
    """x [..., K] @ w [K, N] (or a pair, w[0] [N, K]): x's leading dimensions' splits, then w's N split."""
    pair = isinstance(w, (tuple, list))
    xs, ws = operand_spec(x), operand_spec(w[0] if pair and len(w) == 2 else w)
    if not xs or ws is None or len(ws) != 2:
        return None
    return distinct_axes(*xs[:-1], ws[0] if pair else ws[1])


@auto_axes_if_explicit(fp8_dot_result_spec)
def fp8_dot(x: ArrayLike, w: ArrayLike | QuantizedPair) -> jax.Array:
    """x [..., K] @ w [K, N] in FP8, returned in x.dtype. w is a float master weight (Flax kernel layout) or a
    pre-quantized pair (w_fp8 [N, K], scale [nb, kb]), which is frozen (zero gradients for its data and scales).
    Differentiable, with FP8 dgrad and wgrad. Empty dimensions give what x @ w gives (an empty result, or zeros for
    K = 0; a pair's own dimensions must not be empty)."""
    fn = "fp8_dot"
    x = check.floating(fn, "x", x, allow_empty=True)
    if x.ndim < 1:
        raise ValueError(f"{fn}: x must be [..., K], got a scalar")
    k = x.shape[-1]
    if isinstance(w, (tuple, list)):
        w_data, w_scale = check.pair(fn, "w", w)
        w_data = check.fp8(fn, "w[0] (w data)", w_data, 2)
        n, wk = w_data.shape
        check.same(fn, "K", wk, k, f"x is [..., K] with K={k}, w[0] is [N, K] with K={wk}")
        w_scale = check.scale(fn, "w[1] (w scale)", w_scale, check.scale_shapes_rhs(n, k, per_row=False))
        if x.size == 0:  # (no token: an empty result, as x @ w's)
            return jnp.einsum("...k,nk->...n", x, w_data.astype(x.dtype))
        out = _fp8_dot_quantized(*match_vma(x.reshape(-1, k), w_data, w_scale))
        return checkpoint_name(out.reshape(*x.shape[:-1], n), CHECKPOINT_NAMES[0])
    w = check.floating(fn, "w", w, ndim=2, allow_empty=True)
    check.same(fn, "K", w.shape[0], k, f"x is [..., K] with K={k}, w is [K, N] with K={w.shape[0]}")
    if x.size == 0 or w.size == 0:  # (an empty result, or K = 0: zeros; x @ w's, and its zero gradients)
        return jnp.matmul(x, w.astype(x.dtype))
    # Inside shard_map, a replicated w enters varying like x (see match_vma): its gradient is then summed over shards.
    out = _fp8_dot_call(*match_vma(x.reshape(-1, k), w))
    return checkpoint_name(out.reshape(*x.shape[:-1], w.shape[1]), CHECKPOINT_NAMES[0])


def _dot_fwd_math(x2, w_q):
    return fp8_gemm_nt(token_cast_to_fp8(x2), w_q, out_dtype=_gemm_dtype(x2.dtype)).astype(x2.dtype)


def _dgrad(g2, w_dgrad, dtype):
    """g2 @ W^T, w_dgrad = W's own 128x128 quantization ([N, K] data; see _quantize_weight_for_grad)."""
    return fp8_gemm_nt(token_cast_to_fp8(g2), w_dgrad, out_dtype=_gemm_dtype(dtype)).astype(dtype)


def _wgrad(x2, g2, dtype):
    """X^T @ G [K, N] with 1x128 scaling along the token dimension on both operands (the 1D1D recipe)."""
    x_t, g_t = transposed_cast_to_fp8(x2), transposed_cast_to_fp8(g2)
    return fp8_gemm_nt(x_t, g_t, out_dtype=_wgrad_dtype(dtype)).astype(dtype)


def _quantize_weight(w):
    """w [..., K, N] -> the 128x128 quantization of w^T: ([..., N, K], [..., nb, kb])."""
    return transposed_cast_to_fp8(w, per_block=True)


def _quantize_weight_for_grad(w, dgrad):
    """w [..., K, N] -> (the forward GEMM's operand, w^T quantized: ([..., N, K], [..., nb, kb]); with `dgrad` the
    dgrad's, w quantized: ([..., K, N], [..., kb, nb]), else None). Both from one pass over w: the same blocks and
    scales. Only when the dgrad runs: the second layout costs the kernel a write (NOTES 101)."""
    if not dgrad:
        return _quantize_weight(w), None
    wt_data, scale, w_data = transposed_cast_to_fp8(w, per_block=True, untransposed=True)
    return (wt_data, scale), (w_data, jnp.swapaxes(scale, -1, -2))


def _zeros_if_symbolic(g):
    """The forward rules below see which inputs are differentiated (symbolic_zeros=True); in exchange JAX may pass
    their backward rules a zero cotangent as a SymbolicZero, made an array here."""
    return jnp.zeros(g.aval.shape, g.aval.dtype) if isinstance(g, SymbolicZero) else g


def _traced_call(vjp, static_argnums=()):
    """How the public functions call a custom VJP defined with symbolic_zeros=True: through a jit that is inlined
    into any program tracing it (the program lowers as before). Eagerly inside shard_map (no jit around the call),
    JAX 0.11 / 0.12 refuses such a custom VJP ("custom_vjp symbolic_zeros support with shard_map is not
    implemented"); through the jit, shard_map traces the call instead, as it does inside a caller's own jit."""
    jitted = jax.jit(vjp, static_argnums=static_argnums, inline=True)

    @wraps(vjp)
    def call(*args):
        # Under jax.disable_jit() too: it would drop the jit and leave shard_map's eager trace the refused call.
        with jax.disable_jit(False):
            return jitted(*args)

    return call


def _forward_operands(lhs, rhs):
    """For the forward rules below: (the weight rhs quantized for the forward GEMM; its dgrad layout, only for a
    differentiated lhs; the operands' dtypes as zero-size carriers for the backward; lhs, kept only for a
    differentiated rhs's weight gradient)."""
    rhs_q, rhs_dgrad = _quantize_weight_for_grad(rhs.value, dgrad=lhs.perturbed)
    carriers = jnp.zeros((), lhs.value.dtype), jnp.zeros((), rhs.value.dtype)
    return rhs_q, rhs_dgrad, carriers, (lhs.value if rhs.perturbed else None)


@jax.custom_vjp
def _fp8_dot(x2, w):
    return _dot_fwd_math(x2, _quantize_weight(w))


def _fp8_dot_fwd(x2, w):
    w_q, w_dgrad, carriers, saved_x2 = _forward_operands(x2, w)
    return _dot_fwd_math(x2.value, w_q), (saved_x2, w_dgrad, carriers)


def _fp8_dot_bwd(res, g2):
    x2, w_dgrad, (x_dtype_carrier, w_dtype_carrier) = res
    g2 = _zeros_if_symbolic(g2)
    return (None if w_dgrad is None else _dgrad(g2, w_dgrad, x_dtype_carrier.dtype),
            None if x2 is None else _wgrad(x2, g2, w_dtype_carrier.dtype))


_fp8_dot.defvjp(_fp8_dot_fwd, _fp8_dot_bwd, symbolic_zeros=True)
_fp8_dot_call = _traced_call(_fp8_dot)


@jax.custom_vjp
def _fp8_dot_quantized(x2, w_data, w_scale):
    return _dot_fwd_math(x2, (w_data, w_scale))


def _fp8_dot_quantized_fwd(x2, w_data, w_scale):
    return _dot_fwd_math(x2, (w_data, w_scale)), (w_data, w_scale, jnp.zeros((), x2.dtype))


def _fp8_dot_quantized_bwd(res, g2):
    w_data, w_scale, x_dtype_carrier = res
    # A pre-quantized weight is frozen: its FP8 data and scales get zero cotangents.
    return (_dgrad(g2, _transposed((w_data, w_scale)), x_dtype_carrier.dtype), jnp.zeros_like(w_data),
            jnp.zeros_like(w_scale))


_fp8_dot_quantized.defvjp(_fp8_dot_quantized_fwd, _fp8_dot_quantized_bwd)


# ---------------------------------------------------------------- ragged_dot

def _lax_ragged_dot_dtype(lhs, rhs):
    """The dtype jax.lax.ragged_dot gives these operands: its own rule (bf16 with f16 is bf16, where jnp's
    promotion says f32), which strict dtype promotion does not refuse."""
    return _lax_ragged_dot_rule(jnp.dtype(lhs.dtype), jnp.dtype(rhs.dtype), jax.config.jax_enable_x64,
                                jax.config.jax_numpy_dtype_promotion)


@lru_cache(maxsize=None)
def _lax_ragged_dot_rule(lhs_dtype, rhs_dtype, *modes):
    """(Cached per dtype pair and mode: an abstract trace would otherwise run on every eager call. Asked outside any
    mesh: under Explicit mesh axes jax.lax.ragged_dot has no sharding rule, even for these unsharded shapes.)"""
    del modes  # part of the cache key only: the rule is asked under the modes in force
    shape = jax.ShapeDtypeStruct
    with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((), ())):
        return jax.eval_shape(jax.lax.ragged_dot, shape((1, 1), lhs_dtype), shape((1, 1, 1), rhs_dtype),
                              shape((1,), jnp.int32)).dtype


def _ragged_dot_result_spec(lhs, rhs, *_, **__):
    """lhs [M, K], rhs [G, K, N]: lhs's M split, then rhs's N split."""
    ls, rs = operand_spec(lhs), operand_spec(rhs)
    if ls is None or rs is None or len(ls) != 2 or len(rs) != 3:
        return None
    return distinct_axes(ls[0], rs[2])


@auto_axes_if_explicit(_ragged_dot_result_spec)
def ragged_dot(lhs: ArrayLike, rhs: ArrayLike, group_sizes: ArrayLike, precision: Any = None,
               preferred_element_type: DTypeLike | None = None, group_offset: ArrayLike | None = None) -> jax.Array:
    """jax.lax.ragged_dot computed in FP8: lhs [M, K], rhs [G, K, N], group_sizes [G] -> [M, N].

    Rows past sum(group_sizes) are zeros; with group_offset ([1] int), rows of groups before it are zeros too.
    `precision` is accepted for signature compatibility (the FP8 recipe fixes the precision). Empty dimensions give
    what jax.lax.ragged_dot gives: an empty result, or zeros for K = 0 or G = 0."""
    fn = "ragged_dot"
    del precision
    lhs = check.floating(fn, "lhs", lhs, ndim=2, allow_empty=True)
    rhs = check.floating(fn, "rhs", rhs, ndim=3, allow_empty=True)
    check.same(fn, "K", rhs.shape[1], lhs.shape[1], f"lhs is [M, K] with K={lhs.shape[1]}, rhs is [G, K, N] "
               f"with K={rhs.shape[1]}")
    group_sizes = check.index(fn, "group_sizes", group_sizes, (rhs.shape[0],))
    if group_offset is None:
        group_offset = jnp.zeros((1,), jnp.int32)
    group_offset = check.index(fn, "group_offset", group_offset, (1,))
    if preferred_element_type is None:
        out_dtype = _lax_ragged_dot_dtype(lhs, rhs)
    else:
        try:
            out_dtype = jnp.dtype(preferred_element_type)
        except TypeError as e:
            raise TypeError(f"{fn}: preferred_element_type must be a floating dtype, got "
                            f"{preferred_element_type!r}") from e
        if not jnp.issubdtype(out_dtype, jnp.floating):
            raise TypeError(f"{fn}: preferred_element_type must be a floating dtype, got {out_dtype}")
    if lhs.size == 0 or rhs.size == 0:  # (every product is empty, or sums nothing: zeros, with zero gradients)
        return jnp.einsum("mk,gkn->mn", lhs.astype(out_dtype), rhs.astype(out_dtype)).astype(out_dtype)
    out = _ragged_dot_call(out_dtype, *match_vma(lhs, rhs, group_sizes, group_offset))
    return checkpoint_name(out, CHECKPOINT_NAMES[1])


def _ragged_row_mask(group_sizes, group_offset, m):
    return (ragged_row_groups(group_sizes, m) >= group_offset[0])[:, None]


def _ragged_fwd_math(out_dtype, lhs, rhs_q, group_sizes, group_offset):
    d = fp8_grouped_gemm_nt(token_cast_to_fp8(lhs), rhs_q, group_sizes, out_dtype=_gemm_dtype(out_dtype))
    return jnp.where(_ragged_row_mask(group_sizes, group_offset, lhs.shape[0]), d, 0).astype(out_dtype)


def _dgrad_grouped(g, rhs_dgrad, group_sizes, dtype):
    d = fp8_grouped_gemm_nt(token_cast_to_fp8(g), rhs_dgrad, group_sizes, out_dtype=_gemm_dtype(dtype))
    return d.astype(dtype)


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def _ragged_dot(out_dtype, lhs, rhs, group_sizes, group_offset):
    return _ragged_fwd_math(out_dtype, lhs, _quantize_weight(rhs), group_sizes, group_offset)


def _ragged_dot_fwd(out_dtype, lhs, rhs, group_sizes, group_offset):
    group_sizes, group_offset = group_sizes.value, group_offset.value
    rhs_q, rhs_dgrad, carriers, saved_lhs = _forward_operands(lhs, rhs)
    out = _ragged_fwd_math(out_dtype, lhs.value, rhs_q, group_sizes, group_offset)
    return out, (saved_lhs, rhs_dgrad, group_sizes, group_offset, carriers)


def _grouped_wgrad(lhs, g, group_sizes, dtype, lhs_rows=None, g_rows=None):
    """The experts' weight gradient lhs^T g per group, in dtype (see _wgrad_dtype and _token_major_operands)."""
    operands = _token_major_operands(lhs, g, group_sizes, lhs_rows=lhs_rows, g_rows=g_rows)
    return k_grouped_fp8_gemm_nt_contiguous(*operands, out_dtype=_wgrad_dtype(dtype)).astype(dtype)


def _token_major_operands(lhs, g, group_sizes, lhs_rows=None, g_rows=None):
    """The k-grouped weight gradient's operands: lhs^T and g^T quantized 1x128 along the tokens, each group's tokens
    from a 128-row block on, and the padded group sizes. With lhs_rows (g_rows), the lhs is lhs[lhs_rows] (g is
    g[g_rows]), read in place."""
    pairs = (lhs if lhs_rows is None else lhs_rows).shape[0]
    block_src, block_rows, padded_sizes = group_block_map(group_sizes, pairs)
    block_map = (block_src, block_rows)
    return (transposed_cast_to_fp8(lhs, block_map=block_map, row_index=lhs_rows),
            transposed_cast_to_fp8(g, block_map=block_map, row_index=g_rows), padded_sizes)


def _ragged_dot_bwd(out_dtype, res, g):
    lhs, rhs_dgrad, group_sizes, group_offset, (lhs_dtype_carrier, rhs_dtype_carrier) = res
    g = _zeros_if_symbolic(g)
    g = jnp.where(_ragged_row_mask(group_sizes, group_offset, g.shape[0]), g, 0)
    d_lhs = d_rhs = None
    if rhs_dgrad is not None:
        d_lhs = _dgrad_grouped(g, rhs_dgrad, group_sizes, lhs_dtype_carrier.dtype)
    if lhs is not None:
        d_rhs = _grouped_wgrad(lhs, g, group_sizes, rhs_dtype_carrier.dtype)
    return d_lhs, d_rhs, None, None


_ragged_dot.defvjp(_ragged_dot_fwd, _ragged_dot_bwd, symbolic_zeros=True)
_ragged_dot_call = _traced_call(_ragged_dot, static_argnums=0)


# ---------------------------------------------------------------- ragged_dot of dispatched rows

def _moe_gemm_args(fn: str, lhs, order, top_k, rhs, group_sizes, *, dispatched: bool, rhs_name="rhs"):
    """dispatched_ragged_dot's and combined_ragged_dot's operands checked: (lhs, order, top_k as an int, rhs,
    group_sizes). The lhs is x [T, K] (dispatched) or the pairs' rows [T * top_k, K]; order has T * top_k entries."""
    name, rows = ("x", "[T, K]") if dispatched else ("lhs", "[T * top_k, K]")
    lhs = check.floating(fn, name, lhs, ndim=2)
    rhs = check.floating(fn, rhs_name, rhs, ndim=3)
    check.same(fn, "K", rhs.shape[1], lhs.shape[1], f"{name} is {rows} with K={lhs.shape[1]}, {rhs_name} is "
               f"[G, K, N] with K={rhs.shape[1]}")
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:  # (static: shapes use it)
        raise ValueError(f"{fn}: top_k must be a positive int, got {top_k!r}")
    top_k = int(top_k)
    if not dispatched and lhs.shape[0] % top_k:
        raise ValueError(f"{fn}: lhs [T * top_k, K] has {lhs.shape[0]} rows, not a multiple of top_k = {top_k}")
    order = check.index(fn, "order", order, (lhs.shape[0] * top_k if dispatched else lhs.shape[0],))
    group_sizes = check.index(fn, "group_sizes", group_sizes, (rhs.shape[0],))
    return lhs, order, top_k, rhs, group_sizes


def dispatched_ragged_dot(x, order, top_k: int, rhs, group_sizes) -> jax.Array:
    """ragged_dot(x[order // top_k], rhs, group_sizes) in x.dtype: an MoE layer's first expert GEMM over its dispatched
    rows, without the gathered copy. x [T, K], order int32 [T * top_k] (a permutation of the (token, slot) pairs,
    sorted by expert), rhs [G, K, N], group_sizes [G] -> [T * top_k, N]; the same values and gradients.

    The forward quantizes x's rows per token as it reads them through the gather's index (token_cast_to_fp8's
    row_index: no gathered copy of x or of its FP8 rows), and the weight gradient's token-major operand reads x in
    place through the same index (transposed_cast_to_fp8's row_index). x's gradient sums each token's top_k rows (as
    `nn.experts.dispatch`'s). `order` must be a permutation (as nn.moe's sort makes it): other values are read safely
    (rows outside x read as zeros) but mean nothing."""
    x, order, top_k, rhs, group_sizes = _moe_gemm_args("dispatched_ragged_dot", x, order, top_k, rhs, group_sizes,
                                                       dispatched=True)
    out = _dispatched_ragged_dot_call(top_k, *match_vma(x, order, rhs, group_sizes))
    return checkpoint_name(out, CHECKPOINT_NAMES[1])


def _gathered_rows_gemm(x, rows, rhs_q, group_sizes, dtype):
    """The grouped FP8 GEMM of x[rows] in `dtype`: x's rows quantized per token as they are read through `rows` (an
    index outside x reads a row of zeros), with no gathered copy of x or of its FP8 rows."""
    lhs_q = token_cast_to_fp8(x, row_index=rows)
    return fp8_grouped_gemm_nt(lhs_q, rhs_q, group_sizes, out_dtype=_gemm_dtype(dtype)).astype(dtype)


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def _dispatched_ragged_dot(top_k, x, order, rhs, group_sizes):
    return _gathered_rows_gemm(x, order // top_k, _quantize_weight(rhs), group_sizes, x.dtype)


def _dispatched_ragged_dot_fwd(top_k, x, order, rhs, group_sizes):
    order, group_sizes = order.value, group_sizes.value
    rhs_q, rhs_dgrad, carriers, saved_x = _forward_operands(x, rhs)
    out = _gathered_rows_gemm(x.value, order // top_k, rhs_q, group_sizes, x.value.dtype)
    return out, (saved_x, order, rhs_dgrad, group_sizes, carriers)


def _dispatched_ragged_dot_bwd(top_k, res, g):
    x, order, rhs_dgrad, group_sizes, (x_dtype_carrier, rhs_dtype_carrier) = res
    # (no mask for rows past sum(group_sizes): the dgrad's GEMM writes them zeros, the block map leaves them out)
    g = _zeros_if_symbolic(g)
    d_x = d_rhs = None
    if rhs_dgrad is not None:
        d_x = sum_token_slots(_dgrad_grouped(g, rhs_dgrad, group_sizes, x_dtype_carrier.dtype), order, top_k)
    if x is not None:
        d_rhs = _grouped_wgrad(x, g, group_sizes, rhs_dtype_carrier.dtype, lhs_rows=order // top_k)
    return d_x, None, d_rhs, None


_dispatched_ragged_dot.defvjp(_dispatched_ragged_dot_fwd, _dispatched_ragged_dot_bwd, symbolic_zeros=True)
_dispatched_ragged_dot_call = _traced_call(_dispatched_ragged_dot, static_argnums=0)


# ---------------------------------------------------------------- dispatched_ragged_dot with the SwiGLU

def dispatched_swiglu(x, order, top_k: int, rhs, group_sizes, row_weights) -> jax.Array:
    """swiglu(dispatched_ragged_dot(x, order, top_k, rhs, group_sizes), row_weights) in x.dtype: an MoE layer's first
    expert GEMM and its weighted SwiGLU, h = silu(g) * u * row_weights for [g | u] the product's rows (rhs [G, K, 2F]
    -> h [T * top_k, F]), computed in float32 and rounded once; row_weights [T * top_k] (the combine weights of the
    pairs, in the rows' order). The same values and gradients as the two steps apart.

    The backward pass forms [g | u]'s gradient, row_weights' and the dgrad's FP8 operand (the gradient's per-token
    quantization) in one pass (`swiglu.swiglu_backward`: one kernel on sm_90 for bfloat16 with F % 128 == 0) where
    autodiff of the two steps takes three. The product's rows are saved for it, named like ragged_dot's result for
    jax.checkpoint policies."""
    x, order, top_k, rhs, group_sizes, row_weights = _swiglu_args("dispatched_swiglu", x, order, top_k, rhs,
                                                                  group_sizes, row_weights)
    return _dispatched_swiglu_call(top_k, *match_vma(x, order, rhs, group_sizes, row_weights))


def _swiglu_args(fn: str, x, order, top_k, rhs, group_sizes, row_weights, rhs_name="rhs"):
    """dispatched_swiglu's operands checked (rhs named rhs_name): (x, order, top_k as an int, rhs, group_sizes,
    row_weights)."""
    x, order, top_k, rhs, group_sizes = _moe_gemm_args(fn, x, order, top_k, rhs, group_sizes, dispatched=True,
                                                       rhs_name=rhs_name)
    if rhs.shape[2] % 2:
        raise ValueError(f"{fn}: {rhs_name} [G, K, 2F] has {rhs.shape[2]} columns, not gate and up of F each (odd)")
    row_weights = check.floating(fn, "row_weights", row_weights, ndim=1)
    check.same(fn, "rows", row_weights.shape[0], order.shape[0], f"row_weights [T * top_k] has "
               f"{row_weights.shape[0]} entries, order has {order.shape[0]}")
    return x, order, top_k, rhs, group_sizes, row_weights


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def _dispatched_swiglu(top_k, x, order, rhs, group_sizes, row_weights):
    gate_up = _gathered_rows_gemm(x, order // top_k, _quantize_weight(rhs), group_sizes, x.dtype)
    return swiglu(checkpoint_name(gate_up, CHECKPOINT_NAMES[1]), row_weights, x.dtype)


def _swiglu_forward_rule(top_k, x, order, rhs, group_sizes, row_weights, activation):
    """The forward rule of the first GEMM and the SwiGLU: (activation(gate_up, row_weights), the residuals of
    _dispatched_swiglu_bwd)."""
    order, group_sizes = order.value, group_sizes.value
    rhs_q, rhs_dgrad, carriers, saved_x = _forward_operands(x, rhs)
    gate_up = _gathered_rows_gemm(x.value, order // top_k, rhs_q, group_sizes, x.value.dtype)
    gate_up = checkpoint_name(gate_up, CHECKPOINT_NAMES[1])
    out = activation(gate_up, row_weights.value)
    w_carrier = jnp.zeros((), row_weights.value.dtype)
    return out, (saved_x, order, rhs_dgrad, group_sizes, carriers, gate_up, row_weights.value, w_carrier)


def _dispatched_swiglu_fwd(top_k, x, order, rhs, group_sizes, row_weights):
    return _swiglu_forward_rule(top_k, x, order, rhs, group_sizes, row_weights, lambda g, w: swiglu(g, w, g.dtype))


def _dispatched_swiglu_bwd(top_k, res, dh):
    x, order, rhs_dgrad, group_sizes, (x_dtype_carrier, rhs_dtype_carrier), gate_up, row_weights, w_carrier = res
    dh = _zeros_if_symbolic(dh)
    d_gate_up, d_gate_up_q, d_w = swiglu_backward(gate_up, dh, row_weights)
    d_x = d_rhs = None
    if rhs_dgrad is not None:
        dtype = x_dtype_carrier.dtype
        d = fp8_grouped_gemm_nt(d_gate_up_q, rhs_dgrad, group_sizes, out_dtype=_gemm_dtype(dtype)).astype(dtype)
        d_x = sum_token_slots(d, order, top_k)
    if x is not None:
        d_rhs = _grouped_wgrad(x, d_gate_up, group_sizes, rhs_dtype_carrier.dtype, lhs_rows=order // top_k)
    return d_x, None, d_rhs, None, d_w.astype(w_carrier.dtype)


_dispatched_swiglu.defvjp(_dispatched_swiglu_fwd, _dispatched_swiglu_bwd, symbolic_zeros=True)
_dispatched_swiglu_call = _traced_call(_dispatched_swiglu, static_argnums=0)


# ---------------------------------------------------------------- ragged_dot summed per token

def combined_ragged_dot(lhs, order, top_k: int, rhs, group_sizes) -> jax.Array:
    """sum_token_slots(ragged_dot(lhs, rhs, group_sizes), order, top_k) in lhs.dtype: an MoE layer's second expert GEMM
    with each token's top_k output rows summed (the combine, its weights applied to lhs), the transpose of
    dispatched_ragged_dot's gather. lhs [T * top_k, K] sorted by expert, order int32 [T * top_k] (the permutation of
    the (token, slot) pairs that sorted them), rhs [G, K, N], group_sizes [G] -> [T, N]: row t sums the product's rows
    i with order[i] // top_k = t in float32, rounded once.

    The backward pass's output gradient is g[order // top_k] for g [T, N]: the dgrad quantizes g's rows per token as
    it reads them through the gather's index (dispatched_ragged_dot's forward), and the weight gradient's token-major
    operand reads g in place through the same index: no gathered copy. `order` must be a permutation (as for
    dispatched_ragged_dot)."""
    lhs, order, top_k, rhs, group_sizes = _moe_gemm_args("combined_ragged_dot", lhs, order, top_k, rhs, group_sizes,
                                                         dispatched=False)
    out = _combined_ragged_dot_call(top_k, *match_vma(lhs, order, rhs, group_sizes))
    return checkpoint_name(out, CHECKPOINT_NAMES[1])


def _combined_fwd_math(top_k, lhs_q, dtype, order, rhs_q, group_sizes):
    """The combined product in dtype from the lhs's per-token quantization lhs_q."""
    d = fp8_grouped_gemm_nt(lhs_q, rhs_q, group_sizes, out_dtype=_gemm_dtype(dtype))
    return sum_token_slots(d.astype(dtype), order, top_k)


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def _combined_ragged_dot(top_k, lhs, order, rhs, group_sizes):
    return _combined_fwd_math(top_k, token_cast_to_fp8(lhs), lhs.dtype, order, _quantize_weight(rhs), group_sizes)


def _combined_forward_rule(top_k, lhs, lhs_q, order, rhs, group_sizes):
    """The forward rule of combined_ragged_dot with lhs's quantization lhs_q given: (its value, its residuals)."""
    order, group_sizes = order.value, group_sizes.value
    rhs_q, rhs_dgrad, carriers, saved_lhs = _forward_operands(lhs, rhs)
    out = _combined_fwd_math(top_k, lhs_q, lhs.value.dtype, order, rhs_q, group_sizes)
    return out, (saved_lhs, order, rhs_dgrad, group_sizes, carriers)


def _combined_ragged_dot_fwd(top_k, lhs, order, rhs, group_sizes):
    return _combined_forward_rule(top_k, lhs, token_cast_to_fp8(lhs.value), order, rhs, group_sizes)


def _combined_ragged_dot_bwd(top_k, res, g):
    lhs, order, rhs_dgrad, group_sizes, (lhs_dtype_carrier, rhs_dtype_carrier) = res
    # (no mask for rows past sum(group_sizes), as in _dispatched_ragged_dot_bwd)
    g = _zeros_if_symbolic(g)
    rows = order // top_k
    d_lhs = d_rhs = None
    if rhs_dgrad is not None:
        d_lhs = _gathered_rows_gemm(g, rows, rhs_dgrad, group_sizes, lhs_dtype_carrier.dtype)
    if lhs is not None:
        d_rhs = _grouped_wgrad(lhs, g, group_sizes, rhs_dtype_carrier.dtype, g_rows=rows)
    return d_lhs, None, d_rhs, None


_combined_ragged_dot.defvjp(_combined_ragged_dot_fwd, _combined_ragged_dot_bwd, symbolic_zeros=True)
_combined_ragged_dot_call = _traced_call(_combined_ragged_dot, static_argnums=0)


# ---------------------------------------------------------------- the MoE experts: dispatched SwiGLU, then combined

def moe_ffn(x, order, top_k: int, w_gate_up, w_down, group_sizes, row_weights) -> jax.Array:
    """combined_ragged_dot(dispatched_swiglu(x, order, top_k, w_gate_up, group_sizes, row_weights), order, top_k,
    w_down, group_sizes): an MoE layer's experts over its dispatched rows (the SwiGLU FFN, its combine weights
    row_weights), x [T, D], w_gate_up [G, D, 2F], w_down [G, F, N] -> [T, N] in x.dtype. The same values and gradients
    as the two steps apart, in one custom VJP: its forward takes the second GEMM's FP8 operand from the SwiGLU's own
    pass (`swiglu.swiglu_fp8`: h and its per-token quantization in one kernel on sm_90), where the two steps quantize
    h again after writing it. `order` must be a permutation (as for dispatched_ragged_dot)."""
    fn = "moe_ffn"
    x, order, top_k, w_gate_up, group_sizes, row_weights = _swiglu_args(fn, x, order, top_k, w_gate_up, group_sizes,
                                                                        row_weights, rhs_name="w_gate_up")
    w_down = check.floating(fn, "w_down", w_down, ndim=3)
    experts, f = w_gate_up.shape[0], w_gate_up.shape[2] // 2
    if w_down.shape[:2] != (experts, f):
        raise ValueError(f"{fn}: w_down has shape {tuple(w_down.shape)}; expected [G, F, N] with G = {experts} and "
                         f"F = {f} (w_gate_up is [G, D, 2F] = {list(w_gate_up.shape)})")
    return checkpoint_name(_moe_ffn_call(top_k, *match_vma(x, order, w_gate_up, w_down, group_sizes, row_weights)),
                           CHECKPOINT_NAMES[1])


class _Primal(NamedTuple):
    """The forward rules' view of an operand (as jax's custom VJP primals): its value, and whether it is
    differentiated."""
    value: jax.Array
    perturbed: bool


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def _moe_ffn(top_k, x, order, w_gate_up, w_down, group_sizes, row_weights):
    gate_up = _gathered_rows_gemm(x, order // top_k, _quantize_weight(w_gate_up), group_sizes, x.dtype)
    h, h_q = swiglu_fp8(checkpoint_name(gate_up, CHECKPOINT_NAMES[1]), row_weights)
    return _combined_fwd_math(top_k, h_q, h.dtype, order, _quantize_weight(w_down), group_sizes)


def _moe_ffn_fwd(top_k, x, order, w_gate_up, w_down, group_sizes, row_weights):
    (h, h_q), swiglu_res = _swiglu_forward_rule(top_k, x, order, w_gate_up, group_sizes, row_weights, swiglu_fp8)
    h = _Primal(h, x.perturbed or w_gate_up.perturbed or row_weights.perturbed)
    out, combined_res = _combined_forward_rule(top_k, h, h_q, order, w_down, group_sizes)
    return out, (swiglu_res, combined_res)


def _moe_ffn_bwd(top_k, res, g):
    swiglu_res, combined_res = res
    d_h, _, d_w_down, _ = _combined_ragged_dot_bwd(top_k, combined_res, g)
    if d_h is None:  # (h is not differentiated: neither is anything before it)
        return None, None, None, d_w_down, None, None
    d_x, _, d_w_gate_up, _, d_row_weights = _dispatched_swiglu_bwd(top_k, swiglu_res, d_h)
    return d_x, None, d_w_gate_up, d_w_down, None, d_row_weights


_moe_ffn.defvjp(_moe_ffn_fwd, _moe_ffn_bwd, symbolic_zeros=True)
_moe_ffn_call = _traced_call(_moe_ffn, static_argnums=0)
