"""Batching rules: `vmap` of every primitive is one call of a primitive on folded operands, never a loop.

Each rule sorts the batched operands into the activation side (A, its scales and its per-row group data) and the
weight side (B and its scales), and takes the cheapest exact rewrite:
  only A batched   fold the batch into M: the rows of all elements form one tall A (B read once);
  only B batched   fold the batch into N: the rows of all elements' B form one wide B (A read once);
  both batched     the batch becomes (part of) the group axis of a grouped call; ragged group data is rewritten so
                   that each row keeps exactly its group (the rows are regrouped, see `_regrouped`).
C (where accepted) follows the output. Every output row (column) depends only on its own row of A (B), its group
and the K blocks of its group, so each rewrite gives what the op gives element by element; none needs lax.map.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax.interpreters import batching as jax_batching

from .quantization import BLOCK
from .reference import ends_at_or_before, rhs_row_scales, segment_ends

F32 = jnp.float32


# ---- moving and folding batch axes ----

def _front(x, d, size):
    """x with its batch axis first (broadcast when x is not batched)."""
    return jnp.broadcast_to(x, (size,) + x.shape) if d is None else jnp.moveaxis(x, d, 0)


def _fold_rows(x):
    """[B, ..., R, C] -> [..., B*R, C]: element b's rows are rows b*R .. b*R+R-1."""
    x = jnp.moveaxis(x, 0, -3)
    return x.reshape(x.shape[:-3] + (x.shape[-3] * x.shape[-2], x.shape[-1]))


def _fold_cols(x):
    """[B, ..., R, C] -> [..., R, B*C]."""
    x = jnp.moveaxis(x, 0, -2)
    return x.reshape(x.shape[:-2] + (x.shape[-2] * x.shape[-1],))


def _unfold_rows(d, size):
    """Inverse of _fold_rows for a result: [..., B*R, C] -> [..., B, R, C], and where its batch axis is."""
    return d.reshape(d.shape[:-2] + (size, d.shape[-2] // size, d.shape[-1])), d.ndim - 2


def _unfold_cols(d, size):
    return d.reshape(d.shape[:-1] + (size, d.shape[-1] // size)), d.ndim - 1


def _fold_rhs_scale(b_scale, n):
    """B's scales [B, ..., nb or N, kb] folded into N alongside B. 128x128 blocks fold as they are when N is a
    multiple of 128; otherwise a block would straddle two elements, so they are spelled out per row (same values)."""
    if b_scale.shape[-2] != n and n % BLOCK:
        b_scale = rhs_row_scales(b_scale, n)
    return _fold_rows(b_scale)


def _any(dims) -> bool:
    return any(d is not None for d in dims)


def _plus_c(d, c, dc, size, out_dtype):
    """C + D as the ops compute it (float32 sum, then the output dtype), C batched or broadcast."""
    c = _front(c, dc, size).astype(F32)
    return (c + d.reshape((1,) * (c.ndim - d.ndim) + d.shape)).astype(out_dtype)


# ---- ragged regrouping ----

def _regrouped(ragged, a, a_scale, key, offset, valid, counts, b, b_scale, out_dtype):
    """Rows a [T, K] as one ragged grouped call. Row t belongs to group key[t] (where valid[t]) and is the
    offset[t]-th row of that group; counts[g] rows belong to group g. The rows are gathered in group order (a row
    never changes its group, so its result is what it would be in its own call) and the results scattered back;
    invalid rows get zeros."""
    t = a.shape[0]
    starts = jnp.cumsum(counts) - counts
    dest = jnp.where(valid, starts[jnp.clip(key, 0, counts.shape[0] - 1)] + offset, t)
    src = jnp.zeros((t,), jnp.int32).at[dest].set(jnp.arange(t, dtype=jnp.int32), mode="drop")
    d = ragged.bind(a[src], a_scale[src], b, b_scale, counts.astype(jnp.int32), out_dtype=out_dtype)
    return jnp.where(valid[:, None], d[jnp.clip(dest, 0, t - 1)], 0).astype(d.dtype)


def _exclusive_cumsum(x, axis):
    return jnp.cumsum(x, axis=axis) - x


# ---- rules ----

def _dense(dense, masked):
    def rule(size, args, dims, *, out_dtype, overwrite_c=False):
        a, a_scale, b, b_scale, *c = args
        da, das, db, dbs, *dc = dims
        lhs, rhs = _any((da, das)), _any((db, dbs))
        if not lhs and not rhs:  # only C is batched: one product, added to each C
            return _plus_c(dense.bind(a, a_scale, b, b_scale, out_dtype=F32), c[0], dc[0], size, out_dtype), 0
        if not rhs:
            c = [_fold_rows(_front(c[0], dc[0], size))] if c else []
            d = dense.bind(_fold_rows(_front(a, da, size)), _fold_rows(_front(a_scale, das, size)), b, b_scale, *c,
                           out_dtype=out_dtype, overwrite_c=overwrite_c)
            return _unfold_rows(d, size)
        b = _front(b, db, size)
        b_scale = _front(b_scale, dbs, size)
        if not lhs:
            c = [_fold_cols(_front(c[0], dc[0], size))] if c else []
            d = dense.bind(a, a_scale, _fold_rows(b), _fold_rhs_scale(b_scale, b.shape[-2]), *c, out_dtype=out_dtype,
                           overwrite_c=overwrite_c)
            return _unfold_cols(d, size)
        # A batch of independent GEMMs is the masked grouped GEMM with every row valid (per-row or 128x128 B scales
        # alike); it has no C operand, so C is added to its float32 result as the dense op does.
        a = _front(a, da, size)
        m = a.shape[1]
        d = masked.bind(a, _front(a_scale, das, size), b, b_scale, jnp.full((size,), m, jnp.int32), expected_m=m,
                        out_dtype=F32 if c else out_dtype)
        return (_plus_c(d, c[0], dc[0], size, out_dtype) if c else d), 0

    return rule


def _weights_into_n(prim, a, a_scale, b, b_scale, groups, db, dbs, size, out_dtype):
    """An M-grouped call whose weights alone are batched: the batch folds into N (the activations and the group
    data are shared)."""
    b = _front(b, db, size)
    d = prim.bind(a, a_scale, _fold_rows(b), _fold_rhs_scale(_front(b_scale, dbs, size), b.shape[-2]), groups,
                  out_dtype=out_dtype)
    return _unfold_cols(d, size)


def _contiguous(contiguous):
    def rule(size, args, dims, *, out_dtype):
        a, a_scale, b, b_scale, m_indices = args
        da, das, db, dbs, di = dims
        if not _any((da, das, di)):
            return _weights_into_n(contiguous, a, a_scale, b, b_scale, m_indices, db, dbs, size, out_dtype)
        a, a_scale, m_indices = _front(a, da, size), _front(a_scale, das, size), _front(m_indices, di, size)
        if _any((db, dbs)):
            # Element i's experts become experts i*G .. i*G+G-1; ids outside [0, G) stay invalid (-1).
            b, b_scale = _front(b, db, size), _front(b_scale, dbs, size)
            g = b.shape[1]
            shift = jnp.arange(size, dtype=jnp.int32)[:, None] * g
            m_indices = jnp.where((m_indices >= 0) & (m_indices < g), m_indices + shift, -1)
            b, b_scale = b.reshape((-1,) + b.shape[2:]), b_scale.reshape((-1,) + b_scale.shape[2:])
        m = a.shape[1]
        pad = -m % BLOCK  # each element's expert runs stay aligned to 128 rows once stacked
        if pad:
            a = jnp.pad(a, ((0, 0), (0, pad), (0, 0)))
            a_scale = jnp.pad(a_scale, ((0, 0), (0, pad), (0, 0)))
            m_indices = jnp.pad(m_indices, ((0, 0), (0, pad)), constant_values=-1)
        d = contiguous.bind(_fold_rows(a), _fold_rows(a_scale), b, b_scale, m_indices.reshape(-1), out_dtype=out_dtype)
        return d.reshape(size, m + pad, -1)[:, :m], 0

    return rule


def _ragged(ragged):
    def rule(size, args, dims, *, out_dtype):
        a, a_scale, b, b_scale, group_sizes = args
        da, das, db, dbs, ds = dims
        if not _any((da, das, ds)):
            return _weights_into_n(ragged, a, a_scale, b, b_scale, group_sizes, db, dbs, size, out_dtype)
        a, a_scale, group_sizes = _front(a, da, size), _front(a_scale, das, size), _front(group_sizes, ds, size)
        m, g = a.shape[1], group_sizes.shape[1]
        ends = jax.vmap(segment_ends, in_axes=(0, None))(group_sizes, m)  # [B, G], each element's own rules
        counts = jnp.diff(ends, axis=1, prepend=0)
        rows = jnp.arange(m, dtype=ends.dtype)
        group = jax.vmap(ends_at_or_before, in_axes=(0, None))(ends, m)
        valid = group < g
        safe = jnp.minimum(group, g - 1)
        offset = rows[None] - jnp.take_along_axis(ends - counts, safe, axis=1)
        if _any((db, dbs)):  # element i's groups are groups i*G .. i*G+G-1 of the folded B
            b, b_scale = _front(b, db, size), _front(b_scale, dbs, size)
            b, b_scale = b.reshape((-1,) + b.shape[2:]), b_scale.reshape((-1,) + b_scale.shape[2:])
            key = group + jnp.arange(size, dtype=jnp.int32)[:, None] * g
            counts = counts.reshape(-1)
        else:  # shared groups: group g holds the rows of group g of element 0, then of element 1, ...
            key = group
            offset = offset + jnp.take_along_axis(_exclusive_cumsum(counts, 0), safe, axis=1)
            counts = counts.sum(0, dtype=counts.dtype)
        d = _regrouped(ragged, a.reshape(size * m, -1), a_scale.reshape(size * m, -1), key.reshape(-1),
                       offset.reshape(-1), valid.reshape(-1), counts, b, b_scale, out_dtype)
        return d.reshape(size, m, -1), 0

    return rule


def _masked(masked, ragged):
    def rule(size, args, dims, *, expected_m, out_dtype):
        a, a_scale, b, b_scale, masked_m = args
        da, das, db, dbs, dm = dims
        lhs, rhs = _any((da, das, dm)), _any((db, dbs))
        if not lhs:
            b = _front(b, db, size)
            d = masked.bind(a, a_scale, _fold_rows(b), _fold_rhs_scale(_front(b_scale, dbs, size), b.shape[-2]),
                            masked_m, expected_m=expected_m, out_dtype=out_dtype)
            return _unfold_cols(d, size)
        a, a_scale, masked_m = _front(a, da, size), _front(a_scale, das, size), _front(masked_m, dm, size)
        g, m = a.shape[1], a.shape[2]
        if rhs:  # the batch becomes part of the group axis: B*G independent groups
            b, b_scale = _front(b, db, size), _front(b_scale, dbs, size)
            d = masked.bind(*(x.reshape((-1,) + x.shape[2:]) for x in (a, a_scale, b, b_scale, masked_m)),
                            expected_m=expected_m, out_dtype=out_dtype)
            return d.reshape((size, g) + d.shape[1:]), 0
        # Shared weights: the valid rows of every element, grouped by expert, are one ragged call (computing only
        # the valid rows, as the masked kernel does, and reading each expert's weights once).
        counts = jnp.clip(masked_m, 0, m)  # [B, G]
        rows = jnp.arange(m, dtype=jnp.int32)[None, None]
        valid = rows < counts[..., None]
        key = jnp.broadcast_to(jnp.arange(g, dtype=jnp.int32)[:, None], (size, g, m))
        offset = rows + _exclusive_cumsum(counts, 0)[..., None]
        d = _regrouped(ragged, a.reshape(size * g * m, -1), a_scale.reshape(size * g * m, -1), key.reshape(-1),
                       offset.reshape(-1), valid.reshape(-1), counts.sum(0, dtype=counts.dtype), b, b_scale, out_dtype)
        return d.reshape(size, g, m, -1), 0

    return rule


def _k_grouped(k_grouped):
    def rule(size, args, dims, *, out_dtype, overwrite_c=False):
        a, a_scale, b, b_scale, group_sizes, *c = args
        da, das, db, dbs, ds, *dc = dims
        lhs, rhs = _any((da, das)), _any((db, dbs))
        bind = partial(k_grouped.bind, out_dtype=out_dtype)  # (out_dtype is float32 wherever there is a C)
        bind_c = partial(bind, overwrite_c=overwrite_c)  # (C folded with the batch stays D's operand)
        if ds is None and not (lhs and rhs):
            if not lhs and not rhs:  # only C is batched
                return _front(c[0], dc[0], size) + bind(a, a_scale, b, b_scale, group_sizes)[None], 0
            if lhs:
                c = [_fold_rows(_front(c[0], dc[0], size))] if c else []
                d = bind_c(_fold_rows(_front(a, da, size)), _fold_rows(_front(a_scale, das, size)), b, b_scale,
                           group_sizes, *c)
                return _unfold_rows(d, size)
            c = [_fold_cols(_front(c[0], dc[0], size))] if c else []
            d = bind_c(a, a_scale, _fold_rows(_front(b, db, size)), _fold_rows(_front(b_scale, dbs, size)),
                       group_sizes, *c)
            return _unfold_cols(d, size)
        # Elements laid end to end along K ([M, B*K]); each element's segments (cut at its K, negatives as 0) plus
        # one filler group up to the end of its K keep every K block in its own element's group.
        k = a.shape[-1] if da is None else jnp.moveaxis(a, da, 0).shape[-1]
        group_sizes = _front(group_sizes, ds, size)
        g = group_sizes.shape[1]
        ends = jax.vmap(segment_ends, in_axes=(0, None))(group_sizes, k)
        sizes = jnp.concatenate([jnp.diff(ends, axis=1, prepend=0), k - ends[:, -1:]], axis=1).reshape(-1)
        operands = [_fold_cols(_front(x, d, size)) for x, d in ((a, da), (a_scale, das), (b, db), (b_scale, dbs))]
        d = bind(*operands, sizes.astype(jnp.int32))
        d = d.reshape((size, g + 1) + d.shape[1:])[:, :g]
        return (_front(c[0], dc[0], size) + d if c else d), 0

    return rule


def register(*, dense, contiguous, ragged, masked, k_grouped):
    rules = {dense: _dense(dense, masked), contiguous: _contiguous(contiguous), ragged: _ragged(ragged),
             masked: _masked(masked, ragged), k_grouped: _k_grouped(k_grouped)}
    for family, rule in rules.items():
        jax_batching.fancy_primitive_batchers[family.primitive] = _batcher(family, rule)


def _batcher(family, rule):
    def batcher(axis_data, args, dims, **params):
        if not _any(dims):  # JAX calls batchers with no batched operand too (e.g. under grad)
            return family.primitive.bind(*args, **params), None
        if axis_data.size == 0:  # (the rules fold the batch into rows or groups: nothing to fold, nothing to call)
            return _empty_batch(family, args, dims, params), 0
        return rule(axis_data.size, args, dims, **params)

    return batcher


def _empty_batch(family, args, dims, params):
    """The result of a vmap over no element: [0, ...each element's result shape]."""
    specs = [jax.ShapeDtypeStruct(x.shape if d is None else x.shape[:d] + x.shape[d + 1:], x.dtype)
             for x, d in zip(args, dims)]
    out = jax.eval_shape(partial(family.primitive.bind, **params), *specs)
    return jnp.zeros((0,) + out.shape, out.dtype)
