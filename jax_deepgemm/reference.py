"""The specification: pure-JAX implementations of every kernel family, exactly as API.md defines them.

These run on every platform that has no kernel (the CPU lowering of each primitive *is* this code) and are what the
GPU kernels are tested against. Inputs are already normalised by the public functions: FP8 data, float32 scales in
their logical shapes, int32 index arrays.

The math follows the DeepSeek-V3 promotion recipe: for every 128-wide K block the FP8 partial product is computed
exactly (FP8 x FP8 products are exact in float32), multiplied by both scales and added into a float32 accumulator.
A `lax.scan` over K blocks keeps memory at one [M, N] accumulator whatever K is.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from .quantization import BLOCK, ceil_div


def _vma(aval) -> frozenset:
    mat = getattr(aval, "mat", None)  # jax 0.11: aval.mat.varying; older releases: aval.vma
    return frozenset(getattr(mat, "varying", None) or getattr(aval, "vma", None) or ())


def _varying_like(x: jax.Array, *refs: jax.Array) -> jax.Array:
    """x made varying over the manual mesh axes the refs vary over (inside shard_map a scan carry must have the
    type of the body's output, which varies over the axes its operands vary over)."""
    vma = frozenset().union(*(_vma(jax.typeof(r)) for r in refs))
    return lax.pcast(x, tuple(vma), to="varying") if vma else x


def rhs_row_scales(b_scale: jax.Array, n: int) -> jax.Array:
    """[..., nb, kb] (128x128 blocks) or [..., N, kb] (per row) -> per-row scales [..., N, kb]."""
    if b_scale.shape[-2] == n:  # per row (when N == 1 the two layouts coincide)
        return b_scale
    return jnp.repeat(b_scale, BLOCK, axis=-2)[..., :n, :]


def _k_blocks(x: jax.Array, kb: int) -> jax.Array:
    """[R, K] -> [kb, R, 128] float32, the K tail zero-padded."""
    r, k = x.shape
    xp = jnp.pad(x.astype(jnp.float32), ((0, 0), (0, kb * BLOCK - k)))
    return xp.reshape(r, kb, BLOCK).transpose(1, 0, 2)


def _block_partials_xs(a, a_scale, b, b_scale):
    kb = a_scale.shape[-1]
    rows = rhs_row_scales(b_scale, b.shape[0])
    return (_k_blocks(a, kb), _k_blocks(b, kb), a_scale.T, rows.T)


def _scaled_partial(xs) -> jax.Array:
    a_blk, b_blk, sa, sb = xs
    p = lax.dot_general(a_blk, b_blk, (((1,), (1,)), ((), ())), precision=lax.Precision.HIGHEST,
                        preferred_element_type=jnp.float32)
    return (sa[:, None] * sb[None, :]) * p


def promoted_dot(a, a_scale, b, b_scale) -> jax.Array:
    """float32 [M, N] = sum over K blocks of a_scale * b_scale * (A8 @ B8^T over the block)."""
    m, n = a.shape[0], b.shape[0]

    def step(acc, xs):
        return acc + _scaled_partial(xs), None

    init = _varying_like(jnp.zeros((m, n), jnp.float32), a, a_scale, b, b_scale)
    acc, _ = lax.scan(step, init, _block_partials_xs(a, a_scale, b, b_scale))
    return acc


def fp8_gemm_nt(a, a_scale, b, b_scale, c=None, *, out_dtype, overwrite_c=False):
    del overwrite_c  # (a buffer choice of the CUDA lowering: the values are the same)
    d = promoted_dot(a, a_scale, b, b_scale)
    if c is not None:
        d = c.astype(jnp.float32) + d
    return d.astype(out_dtype)


def _rows_by_expert(a, a_scale, b, b_scale, row_group, out_dtype):
    """d[m] = A[m] @ B[row_group[m]]^T, or zeros where row_group[m] is outside [0, G)."""
    m, n = a.shape[0], b.shape[1]

    def step(acc, g):
        d_g = promoted_dot(a, a_scale, b[g], b_scale[g])
        return jnp.where((row_group == g)[:, None], d_g, acc), None

    init = _varying_like(jnp.zeros((m, n), jnp.float32), a, a_scale, b, b_scale, row_group)
    d, _ = lax.scan(step, init, jnp.arange(b.shape[0], dtype=jnp.int32))
    return d.astype(out_dtype)


def m_grouped_fp8_gemm_nt_contiguous(a, a_scale, b, b_scale, m_indices, *, out_dtype):
    return _rows_by_expert(a, a_scale, b, b_scale, m_indices, out_dtype)


def segment_ends(sizes: jax.Array, limit: int) -> jax.Array:
    """Running end of each segment: negative sizes count as 0 and every end is cut at `limit` (no int overflow)."""
    sizes = jnp.clip(sizes, 0, limit)
    if isinstance(sizes.shape[0], int):
        # min(x + y, limit), with no int32 sum past limit (both are at most limit, up to 2^31 - 1)
        return lax.associative_scan(lambda x, y: x + jnp.minimum(y, limit - x), sizes)
    return _symbolic_count_segment_ends(sizes, limit)


def _symbolic_count_segment_ends(sizes: jax.Array, limit: int) -> jax.Array:
    """segment_ends over a symbolic number of segments (a shape-polymorphic export), which associative_scan refuses.

    The int32 running sum is exact while it stays under 2^31 and wraps after; a float32 running sum, within
    count * 2^-24 of the true sum, says where: under 1.5 * 2^30 the true sum is under 2^31 (so the int sum is
    exact), over it the true sum is over 2^30 >= limit (so the end is cut at limit). Exact for limit <= 2^30 (rows or
    K; a symbolic limit is not checked) and fewer than 2^20 segments (the float's error under 1/16 of the sum).
    """
    if isinstance(limit, int) and limit > 2**30:
        raise ValueError(f"segment ends over a symbolic number of groups need a limit (rows or K) of at most 2^30, "
                         f"got {limit}")
    exact = lax.cumsum(sizes)
    wrapped = lax.cumsum(sizes.astype(jnp.float32)) > 1.5 * 2**30
    return jnp.where(wrapped, limit, jnp.minimum(exact, limit)).astype(sizes.dtype)


def ends_at_or_before(ends: jax.Array, count: int, step: int = 1) -> jax.Array:
    """For each of the points 0, step, ..., (count - 1) * step, how many of `ends` (in [0, 2^31 - step)) are at or
    before it: the segment a point falls in, for segments ending at `ends` in order (searchsorted(ends, points,
    side="right")).
    Counted per point, then summed up the points: searchsorted needs a static number of ends, this takes a symbolic
    one too (a shape-polymorphic export's group count)."""
    first_point_at_or_after = (ends + step - 1) // step
    per_point = jnp.zeros(count, jnp.int32).at[first_point_at_or_after].add(1, mode="drop")
    return lax.cumsum(per_point)


def ragged_row_groups(group_sizes: jax.Array, m: int) -> jax.Array:
    """The group of each of m rows (groups own consecutive rows in order), -1 for rows past the last group."""
    g = ends_at_or_before(segment_ends(group_sizes, m), m)
    return jnp.where(g < group_sizes.shape[0], g, -1)


def fp8_grouped_gemm_nt(a, a_scale, b, b_scale, group_sizes, *, out_dtype):
    return _rows_by_expert(a, a_scale, b, b_scale, ragged_row_groups(group_sizes, a.shape[0]), out_dtype)


def m_grouped_fp8_gemm_nt_masked(a, a_scale, b, b_scale, masked_m, *, expected_m, out_dtype):
    del expected_m  # a performance hint only
    d = jax.vmap(promoted_dot)(a, a_scale, b, b_scale)
    valid = jnp.arange(a.shape[1], dtype=jnp.int32)[None, :] < jnp.clip(masked_m, 0, a.shape[1])[:, None]
    # API.md leaves rows past masked_m unspecified; the reference writes zeros there.
    return jnp.where(valid[:, :, None], d, 0.0).astype(out_dtype)


def k_grouped_fp8_gemm_nt_contiguous(a, a_scale, b, b_scale, group_sizes, c=None, *, out_dtype=jnp.float32,
                                     overwrite_c=False):
    """d[g] = c[g] + the promoted product over K segment g (segments in order; K blocks by their first element),
    summed in float32 and rounded once to out_dtype."""
    del overwrite_c  # (as fp8_gemm_nt's)
    k = a.shape[1]
    g_count = group_sizes.shape[0]
    kb = ceil_div(k, BLOCK)
    ends = segment_ends(group_sizes, k)
    block_group = ends_at_or_before(ends, kb, BLOCK)

    def step(acc, xs):
        g, blk = xs
        return acc.at[g].add(_scaled_partial(blk), mode="drop"), None

    init = jnp.zeros((g_count, a.shape[0], b.shape[0]), jnp.float32)
    if c is not None:
        init = c.astype(jnp.float32)
    init = _varying_like(init, a, a_scale, b, b_scale, group_sizes)
    d, _ = lax.scan(step, init, (block_group, _block_partials_xs(a, a_scale, b, b_scale)))
    return d.astype(out_dtype)
