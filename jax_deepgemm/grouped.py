"""MoE grouped FP8 GEMMs (API.md, "MoE grouped GEMMs"): groups share N and K; all group data (expert ids, group
sizes, masks) is read on the device, never trusted, and never makes a kernel touch memory out of bounds."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _checks as check
from . import primitives
from ._types import ArrayLike, DTypeLike, QuantizedPair
from .quantization import BLOCK


def _lhs_2d(fn: str, a):
    data, scale = check.pair(fn, "a", a)
    data = check.fp8(fn, "a[0] (a data)", data, 2)
    m, k = data.shape
    return data, check.scale(fn, "a[1] (a scale)", scale, check.scale_shapes_lhs(m, k))


def _rhs_grouped(fn: str, b, k: int):
    data, scale = check.pair(fn, "b", b)
    data = check.fp8(fn, "b[0] (b data)", data, 3)
    g, n, kb_ = data.shape
    check.same(fn, "K", kb_, k, f"a is [M, K] with K={k}, b is [G, N, K] with K={kb_}")
    return data, check.scale(fn, "b[1] (b scale)", scale, check.scale_shapes_rhs(n, k, lead=(g,)))


def _m_grouped(fn: str, family, a, b, groups, groups_name: str, groups_per_row: bool, out_dtype) -> jax.Array:
    """The two M-grouped layouts over [M, K] activations: group data per row (contiguous) or per group (ragged)."""
    out_dtype = check.out_dtype(fn, out_dtype)
    a_data, a_scale = _lhs_2d(fn, a)
    b_data, b_scale = _rhs_grouped(fn, b, a_data.shape[1])
    groups = check.index(fn, groups_name, groups, (a_data.shape[0] if groups_per_row else b_data.shape[0],))
    return family.bind(a_data, a_scale, b_data, b_scale, groups, out_dtype=out_dtype)


def m_grouped_fp8_gemm_nt_contiguous(a: QuantizedPair, b: QuantizedPair, m_indices: ArrayLike, *,
                                     out_dtype: DTypeLike = jnp.bfloat16) -> jax.Array:
    """d [M, N]: row m uses expert m_indices[m] (rows of one expert contiguous, runs aligned to
    get_m_alignment_for_contiguous_layout()); a row whose id is -1 or outside [0, G) gets zeros."""
    return _m_grouped("m_grouped_fp8_gemm_nt_contiguous", primitives.m_grouped_contiguous, a, b, m_indices,
                      "m_indices", True, out_dtype)


def fp8_grouped_gemm_nt(a: QuantizedPair, b: QuantizedPair, group_sizes: ArrayLike, *,
                        out_dtype: DTypeLike = jnp.bfloat16) -> jax.Array:
    """Ragged grouped GEMM, no alignment rules: group g owns the next group_sizes[g] rows, in order; rows past the
    last group get zeros; a negative size counts as 0 and a group reaching past row M is cut at M."""
    return _m_grouped("fp8_grouped_gemm_nt", primitives.grouped_ragged, a, b, group_sizes, "group_sizes", False,
                      out_dtype)


def m_grouped_fp8_gemm_nt_masked(a: QuantizedPair, b: QuantizedPair, masked_m: ArrayLike, expected_m: int, *,
                                 out_dtype: DTypeLike = jnp.bfloat16) -> jax.Array:
    """d [G, M, N]: rows m < masked_m[g] (clamped to [0, M]) are computed; rows at or past it are unspecified.
    expected_m is a static int hint that only picks the kernel configuration."""
    fn = "m_grouped_fp8_gemm_nt_masked"
    out_dtype = check.out_dtype(fn, out_dtype)
    expected_m = check.static_int(fn, "expected_m", expected_m)
    a_data, a_scale = check.pair(fn, "a", a)
    a_data = check.fp8(fn, "a[0] (a data)", a_data, 3)
    g, m, k = a_data.shape
    a_scale = check.scale(fn, "a[1] (a scale)", a_scale, check.scale_shapes_lhs(m, k, lead=(g,)))
    b_data, b_scale = _rhs_grouped(fn, b, k)
    check.same(fn, "group count", b_data.shape[0], g, f"a is [G, M, K] with G={g}, b is [G, N, K] with "
               f"G={b_data.shape[0]}")
    masked_m = check.index(fn, "masked_m", masked_m, (g,))
    return primitives.m_grouped_masked.bind(a_data, a_scale, b_data, b_scale, masked_m, expected_m=expected_m,
                                            out_dtype=out_dtype)


def k_grouped_fp8_gemm_nt_contiguous(a: QuantizedPair, b: QuantizedPair, group_sizes: ArrayLike, *,
                                     c: ArrayLike | None = None, out_dtype: DTypeLike = jnp.float32,
                                     overwrite_c: bool = False) -> jax.Array:
    """Weight-gradient GEMM: K is split into G consecutive segments; d[g] = c[g] + a_g @ b_g^T over segment g, as
    float32 [G, M, N]. Both operands use 1x128 scaling ([M, K/128], [N, K/128]); K and every segment are multiples
    of 128 (segments that are not give unspecified values in their groups, never an out-of-bounds access).
    out_dtype=jnp.bfloat16 (without c) rounds the float32 sums once as the kernel stores them, for weights kept in
    bf16: the same values as .astype(jnp.bfloat16) of the float32 result, half the bytes written, no second pass.
    overwrite_c=True (a float32 c) lets the kernel write D into c's buffer, as fp8_gemm_nt's: no copy of a gradient
    accumulator carried through lax.scan or donated, a copy by XLA first where c is still needed after the call."""
    fn = "k_grouped_fp8_gemm_nt_contiguous"
    out_dtype = check.out_dtype(fn, out_dtype)
    if c is not None and out_dtype != jnp.float32:
        raise ValueError(f"{fn}: c accumulates in float32: out_dtype must be jnp.float32 with c, got {out_dtype}")
    a_data, a_scale = check.pair(fn, "a", a)
    b_data, b_scale = check.pair(fn, "b", b)
    a_data = check.fp8(fn, "a[0] (a data)", a_data, 2)
    b_data = check.fp8(fn, "b[0] (b data)", b_data, 2)
    (m, k), (n, kb_) = a_data.shape, b_data.shape
    check.same(fn, "K", kb_, k, f"a is [M, K] with K={k}, b is [N, K] with K={kb_}")
    if k % BLOCK:
        raise ValueError(f"{fn}: K must be a multiple of 128 (pad each segment with zeros), got K={k}")
    a_scale = check.scale(fn, "a[1] (a scale)", a_scale, {"[M, K/128] per-token": (m, k // BLOCK)})
    b_scale = check.scale(fn, "b[1] (b scale)", b_scale, {"[N, K/128] per-row": (n, k // BLOCK)})
    group_sizes = check.index(fn, "group_sizes", group_sizes, (None,))
    g = group_sizes.shape[0]
    if g == 0:
        raise ValueError(f"{fn}: group_sizes must hold at least one group, got shape (0,)")
    c = check.c_operand(fn, c, (g, m, n))
    c = c.astype(jnp.float32) if c is not None else None
    overwrite_c = check.overwrite_c(fn, overwrite_c, c, out_dtype)
    operands = (a_data, a_scale, b_data, b_scale, group_sizes) + ((c,) if c is not None else ())
    return primitives.k_grouped.bind(*operands, out_dtype=out_dtype, overwrite_c=overwrite_c)
