"""MoE grouped GEMMs against the float64 oracle: contiguous (expert id per row), ragged (group sizes), masked and
k-grouped, with skewed, empty and single-token groups and every kind of wrong device data (negative, huge,
out-of-range ids and sizes), which must give the documented result and never crash."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
import oracle
from conftest import (BF16, F32, INT32_MAX, INT32_MIN, UE8M0, assert_matches, assert_same_either_way, kernels_active,
                      q_lhs, q_lhs_batched, q_rhs_batched, randn, seed_of, to64)

ALIGN = 128


def lhs(m, k, seed, ue8m0=False):
    return q_lhs(randn(seed_of("lhs", m, k, seed), (m, k)), ue8m0)


def grouped_rhs(g, n, k, seed, ue8m0=False, per_row=False):
    x = randn(seed_of("rhs", g, n, k, seed), (g, n, k))
    return q_lhs_batched(x, ue8m0) if per_row else q_rhs_batched(x, ue8m0)


def deq(a, b):
    return oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)


# ---------------------------------------------------------------- contiguous

def aligned_ids(runs, pad_rows=0):
    """Expert ids for runs of (expert, rows) (rows a multiple of 128 in the real layout), then -1 padding."""
    ids = [e for e, r in runs for _ in range(r)] + [-1] * pad_rows
    return np.asarray(ids, np.int32)


# The common shape: most cases share it, so that they share one compilation per output dtype.
M, G, N, K = 512, 4, 130, 200

CONTIGUOUS_CASES = {
    # name: (G, ids)
    "aligned": (G, aligned_ids([(0, 128), (2, 256), (3, 128)])),
    "aligned_with_padding_runs": (G, aligned_ids([(1, 128), (0, 128)], pad_rows=256)),
    "padding_inside_runs": (G, np.asarray([0] * 100 + [-1] * 28 + [2] * 128 + [1] * 5 + [-1] * 251, np.int32)),
    "all_padding": (G, np.full(M, -1, np.int32)),
    "out_of_range_blocks": (G, aligned_ids([(G, 128), (INT32_MAX, 128), (INT32_MIN, 128), (1, 128)])),
    "skewed_one_expert": (G, aligned_ids([(3, 512)])),
}
SMALL_CONTIGUOUS_CASES = {
    # name: (G, ids, out_dtype)
    "single_expert_g1": (1, np.zeros(128, np.int32), BF16),
    "one_row": (2, np.asarray([1], np.int32), F32),
    "three_rows": (4, np.asarray([3, 3, 3], np.int32), BF16),
    "three_rows_padding": (4, np.asarray([-1, -1, -1], np.int32), BF16),
}


def check_contiguous(g, ids, out_dtype):
    m = len(ids)
    a, b = lhs(m, K, 1), grouped_rhs(g, N, K, 1)
    out = dg.m_grouped_fp8_gemm_nt_contiguous(a, b, jnp.asarray(ids), out_dtype=out_dtype)
    assert out.shape == (m, N)
    a64, b64 = deq(a, b)
    assert_matches(out, oracle.contiguous(a64, b64, ids), oracle.contiguous(a64, b64, ids, oracle.gemm_bound),
                   out_dtype)
    # rows with ids outside [0, G) are exactly zero
    bad = (ids < 0) | (ids >= g)
    assert np.all(to64(out)[bad] == 0)


@pytest.mark.parametrize("case", list(CONTIGUOUS_CASES))
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_contiguous(case, out_dtype):
    check_contiguous(*CONTIGUOUS_CASES[case], out_dtype)


@pytest.mark.parametrize("case", list(SMALL_CONTIGUOUS_CASES))
def test_contiguous_small(case):
    check_contiguous(*SMALL_CONTIGUOUS_CASES[case])


@pytest.mark.parametrize("m,n,k,ue8m0", [(256, 256, 384, False), (128, 1, 16, True), (256, 130, 129, True)])
def test_contiguous_shapes_and_scales(m, n, k, ue8m0):
    g = 3
    rng = np.random.default_rng(seed_of(m, n, k))
    ids = np.repeat(rng.integers(-1, g, size=m // ALIGN), ALIGN).astype(np.int32)
    ids[: ALIGN] = 0  # at least one real expert
    a, b = lhs(m, k, 2, ue8m0), grouped_rhs(g, n, k, 2, ue8m0)
    if ue8m0:
        a, b = (a[0], a[1].astype(UE8M0)), (b[0], b[1].astype(UE8M0))
    out = dg.m_grouped_fp8_gemm_nt_contiguous(a, b, ids)
    a64, b64 = deq(a, b)
    assert_matches(out, oracle.contiguous(a64, b64, ids), oracle.contiguous(a64, b64, ids, oracle.gemm_bound), BF16)


def test_contiguous_per_row_b_scales():
    g, m, n, k = 2, 256, 130, 200
    ids = aligned_ids([(1, 128), (0, 128)])
    a, b = lhs(m, k, 3), grouped_rhs(g, n, k, 3, per_row=True)
    assert b[1].shape == (g, n, 2)
    out = dg.m_grouped_fp8_gemm_nt_contiguous(a, b, ids, out_dtype=F32)
    a64, b64 = deq(a, b)
    assert_matches(out, oracle.contiguous(a64, b64, ids), oracle.contiguous(a64, b64, ids, oracle.gemm_bound), F32)


@pytest.mark.parametrize("seed", [0, 1])
def test_contiguous_random_garbage_ids(seed):
    """Per-row ids drawn from anything (huge, negative, unaligned): documented per row on the reference; on the
    kernels unaligned runs give unspecified rows, so there only shape, dtype and termination are checked."""
    rng = np.random.default_rng(seed)
    ids = rng.choice(np.asarray([-1, 0, 1, 2, 3, 4, 5, INT32_MAX, INT32_MIN, -2, 1 << 20], np.int64), size=M)
    ids = ids.astype(np.int32)
    ids[:5] = [0, 1, 2, 3, INT32_MAX]
    a, b = lhs(M, K, 1), grouped_rhs(G, N, K, 1)
    out = dg.m_grouped_fp8_gemm_nt_contiguous(a, b, ids)
    assert out.shape == (M, N) and out.dtype == BF16
    if kernels_active():
        return
    a64, b64 = deq(a, b)
    assert_matches(out, oracle.contiguous(a64, b64, ids), oracle.contiguous(a64, b64, ids, oracle.gemm_bound), BF16)


def test_contiguous_fully_random_int32():
    ids = np.array(jax.random.randint(jax.random.key(5), (M,), INT32_MIN, INT32_MAX, jnp.int32))
    ids[128:256] = INT32_MIN  # and one whole block of invalid ids
    a, b = lhs(M, K, 1), grouped_rhs(G, N, K, 1)
    out = dg.m_grouped_fp8_gemm_nt_contiguous(a, b, ids, out_dtype=F32)
    assert out.shape == (M, N)
    assert np.all(to64(out)[128:256] == 0)  # whole 128-row blocks of invalid ids: zeros on every backend
    if not kernels_active():
        a64, b64 = deq(a, b)
        assert_matches(out, oracle.contiguous(a64, b64, ids), oracle.contiguous(a64, b64, ids, oracle.gemm_bound),
                       F32)


def test_contiguous_jit():
    ids = aligned_ids([(2, 128), (0, 384)])
    a, b = lhs(M, K, 1), grouped_rhs(G, N, K, 1)
    out = jax.jit(dg.m_grouped_fp8_gemm_nt_contiguous, static_argnames="out_dtype")(a, b, ids, out_dtype=F32)
    np.testing.assert_array_equal(np.asarray(out),
                                  np.asarray(dg.m_grouped_fp8_gemm_nt_contiguous(a, b, ids, out_dtype=F32)))


# ---------------------------------------------------------------- ragged (fp8_grouped_gemm_nt)

def ragged_cases():
    rng = np.random.default_rng(7)
    return {
        # name: group sizes (G groups over the common M rows)
        "skewed": [1, 290, 0, 5],
        "empty_groups": [0, 0, M, 0],
        "all_empty": [0, 0, 0, 0],
        "random_1_300": rng.integers(1, 301, size=G).tolist(),
        "random_1_300_b": rng.integers(1, 301, size=G).tolist(),
        "sum_below_m": [17, 0, 100, 40],
        "sum_past_m": [100, 80, 50, 400],
        "negative": [-5, 60, INT32_MIN, 70],
        "huge_first": [INT32_MAX, 5, 0, 0],
        "huge_overflowing_sum": [3, INT32_MAX, INT32_MAX, 2],
        "huge_negative_mix": [INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX],
        "aligned_128": [128, 0, 256, 128],
    }


RAGGED = ragged_cases()
SMALL_RAGGED = {
    # name: (M, group sizes, out_dtype)
    "one_group": (200, [200], F32),
    "one_token_per_group": (8, [1] * 8, BF16),
    "single_row": (1, [0, 1], BF16),
}


def check_ragged(m, sizes, out_dtype):
    sizes = np.asarray(sizes, np.int64).astype(np.int32)
    g = len(sizes)
    a, b = lhs(m, K, 1), grouped_rhs(g, N, K, 1)
    out = dg.fp8_grouped_gemm_nt(a, b, jnp.asarray(sizes), out_dtype=out_dtype)
    assert out.shape == (m, N)
    a64, b64 = deq(a, b)
    assert_matches(out, oracle.ragged(a64, b64, sizes), oracle.ragged(a64, b64, sizes, oracle.gemm_bound), out_dtype)
    # rows past the last group are exactly zero
    end = oracle.ragged_bounds(sizes, m)[-1][1]
    assert np.all(to64(out)[end:] == 0)


@pytest.mark.parametrize("case", list(RAGGED))
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_ragged(case, out_dtype):
    check_ragged(M, RAGGED[case], out_dtype)


@pytest.mark.parametrize("case", list(SMALL_RAGGED))
def test_ragged_small(case):
    check_ragged(*SMALL_RAGGED[case])


@pytest.mark.parametrize("m,n,k,ue8m0,out_dtype", [(1, 1, 16, False, F32), (3, 130, 129, True, BF16),
                                                   (256, 256, 512, False, BF16), (200, 1, 200, True, F32)])
def test_ragged_shapes(m, n, k, ue8m0, out_dtype):
    g = 3
    rng = np.random.default_rng(seed_of(m, n, k))
    cuts = np.sort(rng.integers(0, m + 1, size=g - 1))
    sizes = np.diff(np.concatenate([[0], cuts, [m]])).astype(np.int32)
    a, b = lhs(m, k, 8, ue8m0), grouped_rhs(g, n, k, 8, ue8m0)
    if ue8m0:
        a, b = (a[0], a[1].astype(UE8M0)), (b[0], b[1].astype(UE8M0))
    a64, b64 = deq(a, b)
    out = dg.fp8_grouped_gemm_nt(a, b, sizes, out_dtype=out_dtype)
    assert_matches(out, oracle.ragged(a64, b64, sizes), oracle.ragged(a64, b64, sizes, oracle.gemm_bound), out_dtype)


def test_ragged_jit_with_device_sizes():
    """Group sizes are device data: one compilation serves any sizes."""
    a, b = lhs(M, K, 1), grouped_rhs(G, N, K, 1)
    a64, b64 = deq(a, b)
    fn = jax.jit(dg.fp8_grouped_gemm_nt, static_argnames="out_dtype")
    for sizes in ([35, 35, 35, 35], [0, 140, 0, 0], [1, 2, 3, 600], [-3, 9, INT32_MAX, 1]):
        sizes = np.asarray(sizes, np.int32)
        out = fn(a, b, sizes, out_dtype=F32)
        assert_matches(out, oracle.ragged(a64, b64, sizes), oracle.ragged(a64, b64, sizes, oracle.gemm_bound), F32)


def test_ragged_equals_contiguous_on_aligned_groups():
    a, b = lhs(M, K, 1), grouped_rhs(G, N, K, 1)
    sizes = np.asarray([128, 0, 256, 128], np.int32)
    ids = aligned_ids([(0, 128), (2, 256), (3, 128)])
    np.testing.assert_array_equal(np.asarray(dg.fp8_grouped_gemm_nt(a, b, sizes, out_dtype=F32)),
                                  np.asarray(dg.m_grouped_fp8_gemm_nt_contiguous(a, b, ids, out_dtype=F32)))


# ---------------------------------------------------------------- masked

MM = 130  # the common masked shape: [3, MM, K] x [3, N, K]
MASKED_CASES = {
    "zero_full_over": [0, MM, MM + 7],
    "negative_and_huge": [-3, 1, INT32_MAX],
    "int32_extremes": [INT32_MIN, 64, 3],
    "random": np.random.default_rng(11).integers(0, MM + 1, size=3).tolist(),
    "all_full": [MM, MM, MM],
    "all_zero": [0, 0, 0],
}


def masked_operands(g, m, n, k, seed=12, ue8m0=False):
    a = q_lhs_batched(randn(seed_of("masked", g, m, k, seed), (g, m, k)), ue8m0)
    return a, grouped_rhs(g, n, k, seed, ue8m0)


def check_masked(a, b, masked_m, expected_m, out_dtype):
    masked_m = np.asarray(masked_m, np.int64).astype(np.int32)
    g, m = a[0].shape[:2]
    out = dg.m_grouped_fp8_gemm_nt_masked(a, b, jnp.asarray(masked_m), expected_m, out_dtype=out_dtype)
    assert out.shape == (g, m, b[0].shape[1])
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    valid = oracle.masked_valid(masked_m, g, m)
    assert_matches(out, oracle.masked(a64, b64), oracle.masked(a64, b64, oracle.gemm_bound), out_dtype, rows=valid)
    return out, valid


@pytest.mark.parametrize("case", list(MASKED_CASES))
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_masked(case, out_dtype):
    check_masked(*masked_operands(3, MM, N, K), MASKED_CASES[case], 64, out_dtype)


def test_masked_one_row():
    check_masked(*masked_operands(3, 1, N, K), [1, 0, 1], 1, BF16)


def test_masked_expected_m_is_only_a_hint():
    """Any expected_m (0, a NumPy int, far above M) gives the same specified rows."""
    a, b = masked_operands(3, MM, N, K)
    masked_m = [MM, 65, 1]
    results = [check_masked(a, b, masked_m, e, F32) for e in (0, np.int64(MM), 10**6)]
    for out, valid in results[1:]:
        np.testing.assert_array_equal(to64(out)[valid], to64(results[0][0])[valid])


@pytest.mark.parametrize("g,m,n,k", [(2, 1, 1, 16), (2, 256, 256, 384), (1, 64, 130, 129)])
def test_masked_shapes(g, m, n, k):
    a, b = masked_operands(g, m, n, k, seed=13)
    check_masked(a, b, [m, (m + 1) // 2][:g], m, F32)


def test_masked_jit_device_mask_and_ue8m0():
    g, m, n, k = 4, 130, 64, 256
    a, b = masked_operands(g, m, n, k, seed=14, ue8m0=True)
    a, b = (a[0], a[1].astype(UE8M0)), (b[0], b[1].astype(UE8M0))
    fn = jax.jit(dg.m_grouped_fp8_gemm_nt_masked, static_argnums=(3,))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    for masked_m in ([0, 1, 129, 130], [INT32_MAX, -1, 64, 200]):
        masked_m = np.asarray(masked_m, np.int32)
        out = fn(a, b, masked_m, 64)
        assert out.dtype == BF16
        assert_matches(out, oracle.masked(a64, b64), oracle.masked(a64, b64, oracle.gemm_bound), BF16,
                       rows=oracle.masked_valid(masked_m, g, m))


# ---------------------------------------------------------------- k-grouped

KK = 512  # the common k-grouped shape: a [3, KK], b [130, KK], 3 groups
K_GROUPED_CASES = {
    # name: sizes; every group is checked
    "regular": [128, 256, 128],
    "zero_segment": [128, 0, 384],
    "zero_first_and_last": [0, 512, 0],
    "sum_below_k": [128, 128, 0],
    "all_zero": [0, 0, 0],
    "negative_counts_as_zero": [128, -128, 384],
    "negative_int32_min": [INT32_MIN, 256, 256],
}


def check_k_grouped(m, n, k, sizes, c_dtype, ue8m0=False, checked=None, fn=dg.k_grouped_fp8_gemm_nt_contiguous):
    sizes = np.asarray(sizes, np.int64).astype(np.int32)
    g = len(sizes)
    a = q_lhs(randn(seed_of("kg-a", m, k), (m, k)), ue8m0)
    b = q_lhs(randn(seed_of("kg-b", n, k), (n, k)), ue8m0)
    if ue8m0:
        a, b = (a[0], a[1].astype(UE8M0)), (b[0], b[1].astype(UE8M0))
    c = None if c_dtype is None else randn(seed_of("kg-c", g, m, n), (g, m, n)).astype(c_dtype)
    out = fn(a, b, jnp.asarray(sizes), c=c)
    assert out.shape == (g, m, n) and out.dtype == F32
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    ref = oracle.k_grouped(a64, b64, sizes, c)
    bound = oracle.k_grouped(a64, b64, sizes, c, oracle.gemm_bound)
    checked = range(g) if checked is None else checked
    for gi in checked:
        assert_matches(out[gi], ref[gi], bound[gi], F32)
    # an empty segment gives exactly c (or zeros)
    for gi, (start, end) in enumerate(oracle.k_segments(sizes, k)):
        if start == end and gi in checked:
            np.testing.assert_array_equal(to64(out[gi]), 0.0 if c is None else to64(c[gi]))


@pytest.mark.parametrize("case", list(K_GROUPED_CASES))
@pytest.mark.parametrize("c_dtype", [None, F32, BF16])
def test_k_grouped(case, c_dtype):
    check_k_grouped(3, N, KK, K_GROUPED_CASES[case], c_dtype)


def test_k_grouped_single_group():
    check_k_grouped(3, N, 256, [256], F32)


@pytest.mark.parametrize("m,n", [(128, 256), (1, 1), (130, 3)])
def test_k_grouped_shapes_ue8m0_jit(m, n):
    check_k_grouped(m, n, 512, [256, 128, 0, 128], F32, ue8m0=True, fn=jax.jit(dg.k_grouped_fp8_gemm_nt_contiguous))


@pytest.mark.parametrize("sizes", [[256, 128, 0, 128], [-5, INT32_MAX, 128, 0]])
def test_k_grouped_bf16_out(sizes):
    """out_dtype=bf16 (no C): the float32 result rounded once, bit for bit, any sizes; with C it is refused (C
    accumulates in float32), as is any other dtype."""
    m, n, k = 130, 24, 512
    a, b = q_lhs(randn(seed_of("kgb-a"), (m, k))), q_lhs(randn(seed_of("kgb-b"), (n, k)))
    fn = jax.jit(dg.k_grouped_fp8_gemm_nt_contiguous, static_argnames="out_dtype")
    sizes = jnp.asarray(sizes, jnp.int32)
    out = fn(a, b, sizes, out_dtype=BF16)
    assert out.dtype == BF16 and out.shape == (4, m, n)
    np.testing.assert_array_equal(np.asarray(out).view(np.uint16), np.asarray(fn(a, b, sizes).astype(BF16)).view(
        np.uint16))
    with pytest.raises(ValueError, match="out_dtype must be jnp.float32 with c"):
        dg.k_grouped_fp8_gemm_nt_contiguous(a, b, sizes, c=jnp.zeros((4, m, n)), out_dtype=BF16)
    with pytest.raises(TypeError, match="out_dtype must be jnp.bfloat16 or jnp.float32, got float16"):
        dg.k_grouped_fp8_gemm_nt_contiguous(a, b, sizes, out_dtype=jnp.float16)


@pytest.mark.parametrize("sizes,checked", [
    ([256, INT32_MAX, 0], [0]),          # reaches past K: cut at K; the groups from there on are concerned
    ([128, 512, 128], [0]),              # past K
    ([128, 100, 156], [0]),              # not multiples of 128
    ([INT32_MAX, INT32_MAX, 5], []),     # overflowing sum
    ([-5, 128, 128], [1, 2]),            # negative (not a multiple of 128), counted as 0
])
def test_k_grouped_bad_sizes(sizes, checked):
    """Sizes breaking the rules give unspecified values in the groups concerned only, and no crash."""
    check_k_grouped(3, N, KK, sizes, F32, checked=checked)


# ---------------------------------------------------------------- grad / jit through the grouped primitives

def test_grad_through_ragged_wrt_lhs_scale():
    m, n, k = 20, 9, 200
    sizes = np.asarray([7, 0, 10], np.int32)
    a, b = lhs(m, k, 19), grouped_rhs(3, n, k, 19)
    w = to64(randn(20, (m, n), spread=False))
    grad = jax.jit(jax.grad(lambda sa: jnp.sum(dg.fp8_grouped_gemm_nt((a[0], sa), b, sizes, out_dtype=F32)
                                               * jnp.asarray(w, F32))))(a[1])
    a8, b64 = to64(a[0]), oracle.dequant_rhs(*b)
    expected = np.zeros((m, 2))
    for gi, (start, end) in enumerate(oracle.ragged_bounds(sizes, m)):
        for j in range(2):
            blk = slice(128 * j, 128 * (j + 1))
            expected[start:end, j] = np.sum(w[start:end] * (a8[start:end, blk] @ b64[gi][:, blk].T), axis=1)
    np.testing.assert_allclose(to64(grad), expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    assert np.all(to64(grad)[17:] == 0)


def test_grad_through_k_grouped_wrt_c_and_masked_wrt_scale():
    m, n, k = 3, 5, 256
    a, b = q_lhs(randn(21, (m, k))), q_lhs(randn(22, (n, k)))
    sizes = np.asarray([128, 128], np.int32)
    c = randn(23, (2, m, n))
    w = randn(24, (2, m, n))
    g_c = jax.grad(lambda c: jnp.sum(dg.k_grouped_fp8_gemm_nt_contiguous(a, b, sizes, c=c) * w))(c)
    np.testing.assert_allclose(to64(g_c), to64(w), rtol=1e-6)
    # masked: d/d b_scale of the sum over the specified rows only
    g, mm = 2, 4
    am = q_lhs_batched(randn(25, (g, mm, k)))
    bm = grouped_rhs(g, n, k, 25)
    masked_m = np.asarray([4, 2], np.int32)
    valid = jnp.asarray(oracle.masked_valid(masked_m, g, mm))[:, :, None]

    def loss(sb):
        d = dg.m_grouped_fp8_gemm_nt_masked(am, (bm[0], sb), masked_m, 4, out_dtype=F32)
        return jnp.sum(jnp.where(valid, d, 0.0))

    grad = to64(jax.grad(loss)(bm[1]))
    a64, b8 = oracle.dequant_lhs(*am), to64(bm[0])
    expected = np.zeros((g, 1, 2))
    for gi in range(g):
        rows = int(masked_m[gi])
        for j in range(2):
            blk = slice(128 * j, 128 * (j + 1))
            expected[gi, 0, j] = np.sum(a64[gi, :rows, blk] @ b8[gi, :, blk].T)
    np.testing.assert_allclose(grad, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


def test_k_grouped_overwrite_c_changes_no_value_under_transformations():
    """As test_dense.py's for the dense GEMM: D over C's buffer under jit, vmap, grad (of C) and a scan carrying C."""
    m, n, sizes = 130, 200, jnp.asarray([256, 0, 128], jnp.int32)
    a, b = q_lhs(randn(26, (m, 384))), q_lhs(randn(27, (n, 384)))
    a2 = (jnp.stack([a[0], a[0][::-1]]), jnp.stack([a[1], a[1][::-1]]))
    c, c2, w = randn(28, (3, m, n)), randn(29, (2, 3, m, n)), randn(30, (3, m, n), spread=False)

    def gemm(a, b, c, over):
        return dg.k_grouped_fp8_gemm_nt_contiguous(a, b, sizes, c=c, overwrite_c=over)

    assert_same_either_way(lambda over: jax.jit(gemm, static_argnums=3)(a, b, c, over))
    assert_same_either_way(lambda over: jax.jit(jax.vmap(lambda a, c: gemm(a, b, c, over)))(a2, c2))
    loss = lambda c, over: jnp.sum(gemm(a, b, c, over) * w)  # noqa: E731
    assert_same_either_way(lambda over: jax.jit(jax.grad(loss), static_argnums=1)(c, over))
    step = lambda over: lambda acc, _: (gemm(a, b, acc, over), None)  # noqa: E731
    assert_same_either_way(lambda over: jax.jit(lambda c: jax.lax.scan(step(over), c, None, length=3)[0])(c))
