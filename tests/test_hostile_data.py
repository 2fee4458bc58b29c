"""Hostile data in device arrays, which no trace-time check can see (test_grouped.py has the named bad-size cases):

- non-finite, zero and denormal scales and FP8 NaNs: IEEE results, confined to the outputs whose sums they enter.
  Each 128-wide K block's FP8 partial sum is multiplied by both scales (API.md's order), so an infinite scale gives
  +-inf where that partial sum is non-zero and NaN where it is zero; rows that an op defines as zeros (ids outside
  [0, G), rows past the last group) stay zeros whatever their data holds; one group's data never reaches another's.
- fully random int32 group sizes and masks, and garbage group offsets: the documented result, under jit.
- gradients of ragged_dot with garbage group sizes: those of the sizes they stand for.

On an sm_90 GPU the same checks run against the kernels (denormal scales may then be kept rather than flushed).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
from jax_deepgemm import reference
import oracle
from conftest import (BF16, E4M3, F32, INT32_MAX, INT32_MIN, assert_matches, q_lhs, q_lhs_batched, q_rhs,
                      q_rhs_batched, randn, seed_of, to64)

NAN, INF = np.float32("nan"), np.float32("inf")
DENORMAL = np.float32(2.0**-140)  # below float32's smallest normal (2^-126)


def host(pair):
    """A quantized pair as writable NumPy arrays (FP8 data stays FP8: ml_dtypes)."""
    return np.array(pair[0]), np.array(pair[1], np.float32)


def promoted(a8, sa, b8, sb_rows):
    """float64 D[m, n] = sum over K blocks j of (sa[m, j] * sb_rows[n, j]) * sum_k a8[m, k] b8[n, k], IEEE
    semantics throughout (0 * inf = NaN, inf - inf = NaN)."""
    a8, b8, sa, sb_rows = to64(a8), to64(b8), to64(sa), to64(sb_rows)
    d = np.zeros((a8.shape[0], b8.shape[0]))
    with np.errstate(all="ignore"):
        for j in range(sa.shape[1]):
            blk = slice(128 * j, 128 * (j + 1))
            partial = np.sum(a8[:, None, blk] * b8[None, :, blk], axis=-1)  # no BLAS: NaNs must propagate
            d = d + (sa[:, j, None] * sb_rows[None, :, j]) * partial
    return d


def block_rows(sb, n):
    """128x128 block scales [nb, kb] as per-row scales [N, kb]."""
    return np.repeat(sb, 128, axis=0)[:n]


def bound_of(a8, sa, b8, sb_rows):
    """sum |sa sb a8 b8| over the finite terms: the scale of float32 rounding errors of the finite outputs."""
    with np.errstate(all="ignore"):
        b = promoted(np.abs(to64(a8)), np.abs(to64(sa)), np.abs(to64(b8)), np.abs(to64(sb_rows)))
    return np.nan_to_num(b, nan=0.0, posinf=0.0)


def assert_ieee(out, expected, bound, out_dtype):
    """NaN exactly where expected, the same signed infinities, and the finite values within tolerance."""
    got = to64(out)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg="NaN positions differ")
    inf = np.isinf(expected)
    np.testing.assert_array_equal(got[inf], expected[inf], err_msg="infinities differ")
    finite = np.isfinite(expected)
    assert np.all(np.isfinite(got[finite])), "an output that should be finite is not"
    assert_matches(jnp.asarray(np.where(finite, got, 0.0)).astype(out_dtype), np.where(finite, expected, 0.0),
                   np.where(finite, bound, 0.0), out_dtype)


# ---------------------------------------------------------------- non-finite, zero and denormal values

M, N, K = 8, 260, 384  # kb = 3, nb = 3
NG = 130  # N of the grouped tests: one full and one partial column block


def poisoned_dense():
    a8, sa = host(q_lhs(randn(seed_of("hostile-a"), (M, K))))
    b8, sb = host(q_rhs(randn(seed_of("hostile-b"), (N, K))))
    sa[1, 0] = NAN  # row 1: NaN
    sa[2, 1] = INF  # row 2: +-inf where block 1's partial sum is non-zero
    a8[3, 256:] = 0
    sa[3, 2] = INF  # row 3: inf * 0 = NaN
    sa[4, :] = 0  # row 4: exact zeros
    a8[6, 10] = NAN  # row 6: an FP8 NaN
    sb[1, 1] = -INF  # columns 128..255: -inf or NaN
    b8[7, 300] = NAN  # column 7: NaN
    return (a8, sa), (b8, sb)


@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_dense_non_finite_and_zero_scales(out_dtype):
    (a8, sa), (b8, sb) = poisoned_dense()
    out = dg.fp8_gemm_nt((a8, sa), (b8, sb), out_dtype=out_dtype)
    expected, bound = promoted(a8, sa, b8, block_rows(sb, N)), bound_of(a8, sa, b8, block_rows(sb, N))
    assert np.isnan(expected[1]).all() and np.isnan(expected[3, :128]).all() and (expected[4, 8:128] == 0).all()
    assert np.isinf(expected[2, :128]).any() and np.isfinite(expected[[0, 5], :7]).all()  # the cases are there
    assert_ieee(out, expected, bound, out_dtype)


def test_dense_denormal_scales_give_tiny_or_zero():
    """A denormal scale is used as it is or flushed to zero (XLA on CPU flushes denormals): either way the
    outputs it scales are tiny and finite, and the other rows are exact."""
    a8, sa = host(q_lhs(randn(seed_of("denormal-a"), (M, K))))
    b8, sb = host(q_rhs(randn(seed_of("denormal-b"), (N, K))))
    sa[5, :] = DENORMAL
    out = to64(dg.fp8_gemm_nt((a8, sa), (b8, sb), out_dtype=F32))
    assert np.all(np.isfinite(out[5])) and np.all(np.abs(out[5]) < 1e-30)
    rows = np.arange(M) != 5
    expected = promoted(a8, sa, b8, block_rows(sb, N))
    assert_matches(jnp.asarray(out[rows], F32), expected[rows], bound_of(a8, sa, b8, block_rows(sb, N))[rows], F32)


def test_contiguous_poison_stays_in_its_rows():
    """Padding rows full of NaN data and infinite scales give zeros; a NaN in expert 1's weights reaches only
    expert 1's rows; an unused expert's NaN scales reach nothing."""
    g, m = 3, 256
    ids = np.asarray([1] * 128 + [-1] * 128, np.int32)
    a8, sa = host(q_lhs(randn(seed_of("cont-a"), (m, K))))
    b8, sb = host(q_rhs_batched(randn(seed_of("cont-b"), (g, NG, K))))
    a8[128:] = NAN
    sa[128:] = INF
    sb[0] = NAN
    b8[1, 5, 7] = NAN
    out = dg.m_grouped_fp8_gemm_nt_contiguous((a8, sa), (b8, sb), ids, out_dtype=F32)
    expected = np.zeros((m, NG))
    expected[:128] = promoted(a8[:128], sa[:128], b8[1], block_rows(sb[1], NG))
    assert np.isnan(expected[:128, 5]).all() and np.isfinite(np.delete(expected[:128], 5, axis=1)).all()
    bound = np.zeros((m, NG))
    bound[:128] = bound_of(a8[:128], sa[:128], b8[1], block_rows(sb[1], NG))
    assert_ieee(out, expected, bound, F32)


def test_ragged_poison_stays_in_its_groups():
    """Rows past the last group hold NaN data (zeros out); an empty group's NaN scales reach nothing; an infinite
    scale in group 2's weights reaches group 2's rows only."""
    g, m, sizes = 3, 200, [100, 0, 50]
    a8, sa = host(q_lhs(randn(seed_of("rag-a"), (m, K))))
    b8, sb = host(q_rhs_batched(randn(seed_of("rag-b"), (g, NG, K))))
    a8[150:] = NAN
    sb[1] = NAN
    sb[2, 0, 0] = INF
    # The infinite scale multiplies group 2's first K block: make those partial sums clearly positive, so that the
    # infinities' signs do not hang on sums near zero (the tensor cores round them differently from float64).
    a8[100:150, :128] = np.abs(a8[100:150, :128].astype(np.float32)).astype(a8.dtype)
    b8[2, :, :128] = np.abs(b8[2, :, :128].astype(np.float32)).astype(b8.dtype)
    out = dg.fp8_grouped_gemm_nt((a8, sa), (b8, sb), np.asarray(sizes, np.int32), out_dtype=BF16)
    expected, bound = np.zeros((m, NG)), np.zeros((m, NG))
    for gi, (start, end) in enumerate(oracle.ragged_bounds(sizes, m)):
        if end > start:
            rows = slice(start, end)
            expected[rows] = promoted(a8[rows], sa[rows], b8[gi], block_rows(sb[gi], NG))
            bound[rows] = bound_of(a8[rows], sa[rows], b8[gi], block_rows(sb[gi], NG))
    assert np.isfinite(expected[:100]).all() and np.isinf(expected[100:150, :128]).any()
    assert_ieee(out, expected, bound, BF16)


def test_masked_poison_past_the_mask_stays_out():
    """NaN data in rows past masked_m does not reach the computed rows; a NaN weight scale of group 1 reaches
    group 1 only."""
    g, m, masked_m = 2, 8, np.asarray([3, 8], np.int32)
    a8, sa = host(q_lhs_batched(randn(seed_of("mask-a"), (g, m, K))))
    b8, sb = host(q_rhs_batched(randn(seed_of("mask-b"), (g, NG, K))))
    a8[0, 3:] = NAN
    sb[1, 0, 0] = NAN
    out = to64(dg.m_grouped_fp8_gemm_nt_masked((a8, sa), (b8, sb), masked_m, 8, out_dtype=F32))
    for gi in range(g):
        rows = slice(0, int(masked_m[gi]))
        expected = promoted(a8[gi, rows], sa[gi, rows], b8[gi], block_rows(sb[gi], NG))
        bound = bound_of(a8[gi, rows], sa[gi, rows], b8[gi], block_rows(sb[gi], NG))
        assert_ieee(jnp.asarray(out[gi, rows], F32), expected, bound, F32)
    assert np.isfinite(out[0, :3]).all() and np.isnan(out[1, :, :128]).all()


def test_k_grouped_poison_stays_in_its_segment():
    """A NaN A scale in segment 0 and an infinite B scale in segment 1 reach only their own group."""
    sizes = [128, 256]
    a8, sa = host(q_lhs(randn(seed_of("kg-a"), (M, K))))
    b8, sb = host(q_lhs(randn(seed_of("kg-b"), (NG, K))))  # per-row scales (1D1D)
    sa[2, 0] = NAN
    sb[3, 2] = INF
    out = dg.k_grouped_fp8_gemm_nt_contiguous((a8, sa), (b8, sb), np.asarray(sizes, np.int32))
    for gi, (start, end) in enumerate(oracle.k_segments(sizes, K)):
        blocks = slice(start // 128, end // 128)
        cols = slice(start, end)
        expected = promoted(a8[:, cols], sa[:, blocks], b8[:, cols], sb[:, blocks])
        bound = bound_of(a8[:, cols], sa[:, blocks], b8[:, cols], sb[:, blocks])
        assert_ieee(out[gi], expected, bound, F32)
    assert np.isnan(to64(out[0])[2]).all() and np.isfinite(np.delete(to64(out[0]), 2, axis=0)[:, 3]).all()
    assert np.isinf(to64(out[1])[:, 3]).any()


# ---------------------------------------------------------------- random int32 device data

RM, RG, RK = 200, 6, 256


def random_int32(seed, shape):
    return np.array(jax.random.randint(jax.random.key(seed), shape, INT32_MIN, INT32_MAX, jnp.int32))


def _segment_ends64(sizes, limit):
    """float64-free oracle: Python ints, so no sum wraps."""
    ends, total = [], 0
    for size in sizes:
        total = min(total + max(int(size), 0), limit)
        ends.append(total)
    return np.asarray(ends)


@pytest.mark.parametrize("limit", [1, 300, 2**30, INT32_MAX])
def test_segment_ends_both_forms_on_random_int32_sizes(limit):
    """The ends of the groups (negative sizes 0, cut at limit) in both forms: the scan of a static group count and
    the running sums of a symbolic one (a shape-polymorphic export's), on sizes whose int32 sums wrap."""
    for seed in range(6):
        sizes = random_int32(seed + 20, (40,))
        sizes[seed::7] = np.abs(sizes[seed::7]) % 100  # ordinary groups among them
        if seed == 5:
            sizes[:] = INT32_MAX  # every running sum past 2^31
        want = _segment_ends64(sizes, limit)
        np.testing.assert_array_equal(reference.segment_ends(jnp.asarray(sizes), limit), want)
        if limit <= 2**30:  # (the symbolic form's bound)
            symbolic_form = reference._symbolic_count_segment_ends(jnp.clip(sizes, 0, limit), limit)
            np.testing.assert_array_equal(symbolic_form, want)
        else:  # past it, refused by name
            with pytest.raises(ValueError, match="symbolic number of groups need a limit .* at most 2\\^30"):
                reference._symbolic_count_segment_ends(jnp.clip(sizes, 0, limit), limit)


def test_ends_at_or_before_is_searchsorted():
    """The group of each row / K block, counted without searchsorted (which needs a static group count)."""
    rng = np.random.default_rng(seed_of("ends-at-or-before"))
    for count, step in [(300, 1), (9, 128), (1, 1)]:
        for _ in range(5):
            ends = np.sort(rng.integers(0, count * step + 300, size=rng.integers(1, 12)))
            points = np.arange(count) * step
            np.testing.assert_array_equal(reference.ends_at_or_before(jnp.asarray(ends, jnp.int32), count, step),
                                          np.searchsorted(ends, points, side="right"))


def test_ragged_random_int32_sizes():
    a, b = q_lhs(randn(seed_of("rr-a"), (RM, RK))), q_rhs_batched(randn(seed_of("rr-b"), (RG, NG, RK)))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    fn = jax.jit(lambda s: dg.fp8_grouped_gemm_nt(a, b, s, out_dtype=F32))
    for seed in range(3):
        sizes = random_int32(seed, (RG,))
        sizes[seed] = 40  # and one ordinary group among them
        assert_matches(fn(sizes), oracle.ragged(a64, b64, sizes), oracle.ragged(a64, b64, sizes, oracle.gemm_bound),
                       F32)


def test_masked_random_int32_masks():
    a, b = q_lhs_batched(randn(seed_of("rm-a"), (RG, 5, RK))), q_rhs_batched(randn(seed_of("rm-b"), (RG, NG, RK)))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    fn = jax.jit(lambda mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, 5, out_dtype=F32))
    for seed in range(3):
        masked_m = random_int32(seed + 10, (RG,))
        masked_m[seed] = 2
        assert_matches(fn(masked_m), oracle.masked(a64, b64), oracle.masked(a64, b64, oracle.gemm_bound), F32,
                       rows=oracle.masked_valid(masked_m, RG, 5))


def test_k_grouped_random_int32_sizes():
    """Random sizes are negative (count as 0) or huge (the first huge one takes all of K, the rest are empty)."""
    a, b = q_lhs(randn(seed_of("rk-a"), (4, 512))), q_lhs(randn(seed_of("rk-b"), (NG, 512)))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    fn = jax.jit(dg.k_grouped_fp8_gemm_nt_contiguous)
    for seed in range(3):
        sizes = random_int32(seed + 20, (RG,))
        out = fn(a, b, sizes)
        assert out.shape == (RG, 4, NG)
        expected = oracle.k_grouped(a64, b64, sizes)
        bound = oracle.k_grouped(a64, b64, sizes, fn=oracle.gemm_bound)
        for gi in range(RG):
            assert_matches(out[gi], expected[gi], bound[gi], F32)


# ---------------------------------------------------------------- ragged_dot: garbage sizes and offsets

def equivalent_sizes(sizes, m):
    """The sizes that garbage stands for: negative counted as 0, cut at M."""
    return np.asarray([end - start for start, end in oracle.ragged_bounds(sizes, m)], np.int32)


@pytest.mark.parametrize("sizes", [[INT32_MIN, 5, INT32_MAX], [7, INT32_MAX, INT32_MAX]],
                         ids=["min-5-max", "overflowing-sum"])
def test_ragged_dot_garbage_sizes_forward_and_gradients(sizes):
    m, k, n = 20, 136, 9
    lhs, rhs = randn(seed_of("rd-lhs"), (m, k)), randn(seed_of("rd-rhs"), (3, k, n))
    cot = randn(seed_of("rd-cot"), (m, n))
    garbage, equivalent = np.asarray(sizes, np.int32), equivalent_sizes(sizes, m)

    def loss(lhs, rhs, s):
        return jnp.sum(dg.ragged_dot(lhs, rhs, s) * cot)

    value_and_grads = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
    (v_garbage, g_garbage), (v_equiv, g_equiv) = value_and_grads(lhs, rhs, garbage), value_and_grads(lhs, rhs,
                                                                                                     equivalent)
    np.testing.assert_array_equal(np.asarray(v_garbage), np.asarray(v_equiv))
    for x, y in zip(g_garbage, g_equiv):
        assert np.all(np.isfinite(np.asarray(x)))
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("offset,like", [(INT32_MIN, 0), (-1, 0), (3, None), (INT32_MAX, None)])
def test_ragged_dot_garbage_group_offset(offset, like):
    """An offset below 0 acts as 0; one at or past G leaves no group to compute (all zeros)."""
    lhs, rhs = randn(seed_of("ro-lhs"), (12, 130)), randn(seed_of("ro-rhs"), (3, 130, 7))
    sizes = np.asarray([4, 4, 4], np.int32)
    fn = jax.jit(lambda o: dg.ragged_dot(lhs, rhs, sizes, group_offset=o))
    out = np.asarray(fn(np.asarray([offset], np.int32)))
    if like is None:
        np.testing.assert_array_equal(out, 0)
    else:
        np.testing.assert_array_equal(out, np.asarray(fn(np.asarray([like], np.int32))))


def test_e4m3_nan_bytes_in_quantizer_input_do_not_reach_other_rows():
    """per_token_cast_to_fp8 of a row with a NaN: that row's scale and data are NaN, the other rows are exact."""
    x = np.array(randn(seed_of("q-nan"), (4, 256)))
    x[2, 7] = NAN
    data, scale = dg.per_token_cast_to_fp8(x)
    clean_data, clean_scale = dg.per_token_cast_to_fp8(np.where(np.isnan(x), 0, x))
    assert np.isnan(to64(scale)[2, 0]) and np.isfinite(to64(scale)[2, 1])
    rows = [0, 1, 3]
    np.testing.assert_array_equal(to64(scale)[rows], to64(clean_scale)[rows])
    np.testing.assert_array_equal(to64(data)[rows], to64(clean_data)[rows])
    assert data.dtype == E4M3
