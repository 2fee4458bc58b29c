"""The float64 NumPy oracle: API.md's math written directly, independently of jax_deepgemm (in particular of
jax_deepgemm/reference.py, which is what the CPU path runs and hence what is under test).

Every function takes the *dequantized* float64 operands (or dequantizes them here from the (data, scale) pairs,
`value = f32(fp8) * scale` per block) and loops in plain Python / NumPy, with Python ints for every size so that
huge or negative device values cannot overflow.
"""

from __future__ import annotations

import numpy as np

BLOCK = 128
FP8_E4M3_MAX = 448.0


def kblocks(k: int) -> int:
    return -(-int(k) // BLOCK)


def f64(x) -> np.ndarray:
    """Any array (jax, NumPy, ml_dtypes float8/bfloat16) as float64 values."""
    a = np.asarray(x)
    if a.dtype.kind in "biuf":
        return a.astype(np.float64)
    return a.astype(np.float32).astype(np.float64)  # float8 / bfloat16 (ml_dtypes): exact through float32


def _expand_cols(scale: np.ndarray, k: int) -> np.ndarray:
    """[..., R, kb] -> [..., R, K]: scale[..., r, k // 128]."""
    return np.repeat(scale, BLOCK, axis=-1)[..., :k]


def dequant_lhs(data, scale) -> np.ndarray:
    """1x128 per-token scaling: value[..., m, k] = data[..., m, k] * scale[..., m, k // 128]."""
    d, s = f64(data), f64(scale)
    k = d.shape[-1]
    assert s.shape == d.shape[:-1] + (kblocks(k),), (d.shape, s.shape)
    return d * _expand_cols(s, k)


def dequant_rhs(data, scale) -> np.ndarray:
    """128x128 block scaling (scale [..., ceil(N/128), kb]) or per-row 1x128 (scale [..., N, kb]); the shape decides."""
    d, s = f64(data), f64(scale)
    n, k = d.shape[-2:]
    if s.shape == d.shape[:-1] + (kblocks(k),):  # per row
        return d * _expand_cols(s, k)
    assert s.shape == d.shape[:-2] + (kblocks(n), kblocks(k)), (d.shape, s.shape)
    rows = np.repeat(s, BLOCK, axis=-2)[..., :n, :]
    return d * _expand_cols(rows, k)


def gemm(a: np.ndarray, b: np.ndarray, c=None) -> np.ndarray:
    """D = C + A @ B^T, A [M, K], B [N, K] (float64)."""
    d = a @ b.T
    return d if c is None else f64(c) + d


def gemm_bound(a: np.ndarray, b: np.ndarray, c=None) -> np.ndarray:
    """sum_k |a[m, k] b[n, k]| + |c|: the scale of the rounding errors of any float32 accumulation of D."""
    d = np.abs(a) @ np.abs(b).T
    return d if c is None else np.abs(f64(c)) + d


def contiguous(a: np.ndarray, b: np.ndarray, m_indices, fn=gemm) -> np.ndarray:
    """m-grouped contiguous: row m uses expert m_indices[m]; ids outside [0, G) (-1 padding included) give zeros."""
    g_count, n = b.shape[0], b.shape[1]
    out = np.zeros((a.shape[0], n))
    for m, g in enumerate(np.asarray(m_indices).tolist()):
        if 0 <= g < g_count:
            out[m] = fn(a[m : m + 1], b[g])[0]
    return out


def ragged_bounds(group_sizes, m: int) -> list[tuple[int, int]]:
    """[start, end) of each group: groups own consecutive rows in order, negative sizes count as 0, cut at M."""
    bounds, start = [], 0
    for size in np.asarray(group_sizes).tolist():
        end = min(start + max(int(size), 0), m)
        bounds.append((start, end))
        start = end
    return bounds


def ragged(a: np.ndarray, b: np.ndarray, group_sizes, fn=gemm) -> np.ndarray:
    """Ragged grouped GEMM: rows past the last group are zeros."""
    out = np.zeros((a.shape[0], b.shape[1]))
    for g, (start, end) in enumerate(ragged_bounds(group_sizes, a.shape[0])):
        if end > start:
            out[start:end] = fn(a[start:end], b[g])
    return out


def masked_valid(masked_m, g_count: int, m: int) -> np.ndarray:
    """Boolean [G, M]: rows m < clamp(masked_m[g], 0, M) are specified; the others are not compared."""
    limits = [min(max(int(v), 0), m) for v in np.asarray(masked_m).tolist()]
    assert len(limits) == g_count
    return np.arange(m)[None, :] < np.asarray(limits)[:, None]


def masked(a: np.ndarray, b: np.ndarray, fn=gemm) -> np.ndarray:
    """Masked grouped GEMM on every row: d[g] = a[g] @ b[g]^T (compare only where masked_valid)."""
    return np.stack([fn(a[g], b[g]) for g in range(a.shape[0])])


def k_segments(group_sizes, k: int) -> list[tuple[int, int]]:
    """K segments [start, end): consecutive, negative sizes count as 0, cut at K."""
    return ragged_bounds(group_sizes, k)


def k_grouped(a: np.ndarray, b: np.ndarray, group_sizes, c=None, fn=gemm) -> np.ndarray:
    """d[g] = c[g] + a[:, seg g] @ b[:, seg g]^T (float64); with fn=gemm_bound, the error bound instead."""
    segs = k_segments(group_sizes, a.shape[1])
    out = np.zeros((len(segs), a.shape[0], b.shape[0]))
    for g, (start, end) in enumerate(segs):
        out[g] = fn(a[:, start:end], b[:, start:end], None if c is None else c[g])
    return out


def ragged_dot(lhs: np.ndarray, rhs: np.ndarray, group_sizes, group_offset: int = 0) -> np.ndarray:
    """jax.lax.ragged_dot semantics in float64: lhs [M, K], rhs [G, K, N]; rows past sum(group_sizes) are zeros,
    and with group_offset the rows of groups before it are zeros as well."""
    m, n = lhs.shape[0], rhs.shape[2]
    out = np.zeros((m, n))
    for g, (start, end) in enumerate(ragged_bounds(group_sizes, m)):
        if g >= group_offset and end > start:
            out[start:end] = lhs[start:end] @ rhs[g]
    return out


def ragged_dot_grads(lhs: np.ndarray, rhs: np.ndarray, group_sizes, cot: np.ndarray, group_offset: int = 0):
    """Gradients of sum(ragged_dot(lhs, rhs) * cot) w.r.t. lhs and rhs."""
    d_lhs, d_rhs = np.zeros_like(lhs), np.zeros_like(rhs)
    for g, (start, end) in enumerate(ragged_bounds(group_sizes, lhs.shape[0])):
        if g >= group_offset and end > start:
            d_lhs[start:end] = cot[start:end] @ rhs[g].T
            d_rhs[g] = lhs[start:end].T @ cot[start:end]
    return d_lhs, d_rhs


def calc_diff(x, y) -> float:
    x, y = f64(x), f64(y)
    return float(1.0 - 2.0 * np.sum(x * y) / np.sum(x * x + y * y))


# ---- quantization: what API.md says the scales are ----

def block_amax(x, block_rows: int) -> np.ndarray:
    """amax over blocks of block_rows x 128 of x [R, K] (blocks at the edges are partial): [ceil(R/br), kb]."""
    x = np.abs(f64(x))
    r, k = x.shape
    rb = -(-r // block_rows)
    out = np.zeros((rb, kblocks(k)))
    for i in range(rb):
        for j in range(kblocks(k)):
            out[i, j] = x[i * block_rows : (i + 1) * block_rows, j * BLOCK : (j + 1) * BLOCK].max()
    return out


def expand_blocks(s: np.ndarray, block_rows: int, shape) -> np.ndarray:
    rows = np.repeat(s, block_rows, axis=0)[: shape[0]]
    return _expand_cols(rows, shape[1])


def next_pow2_at_least(v: np.ndarray) -> np.ndarray:
    """The smallest power of two >= v (v > 0), computed exactly in float64."""
    mant, exp = np.frexp(v)  # v = mant * 2**exp, mant in [0.5, 1)
    return np.ldexp(1.0, np.where(mant == 0.5, exp - 1, exp))
