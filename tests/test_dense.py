"""Dense FP8 GEMMs (fp8_gemm_nt/nn/tn/tt) against the float64 oracle: odd and regular shapes, every layout, both
output dtypes, c given or not, 128x128 and per-row (1D1D) B scales, UE8M0 scales, float8_e5m2 data, NumPy inputs,
jit, vmap and grad through the raw GEMM."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
import oracle
from conftest import (BF16, E4M3, E5M2, F32, UE8M0, assert_matches, assert_same_either_way, e5m2_pair, q_lhs, q_rhs,
                      randn, seed_of, to64)

GEMMS = {"nt": dg.fp8_gemm_nt, "nn": dg.fp8_gemm_nn, "tn": dg.fp8_gemm_tn, "tt": dg.fp8_gemm_tt}

# (M, N, K): single rows/columns, K below/around one block, tails on every dimension, regular 128-multiples.
SHAPES = [
    (1, 130, 200),
    (3, 1, 16),
    (3, 130, 129),
    (1, 1, 128),
    (17, 256, 1),
    (128, 256, 384),
    (256, 128, 256),
    (129, 257, 512),
]


def stored(layout: str, a, b):
    """The operands in the layout's storage (A [K, M] for 't', B [K, N] for 'n'), from the same logical data."""
    (a8, sa), (b8, sb) = a, b
    a8 = a8.T if layout[0] == "t" else a8
    b8 = b8.T if layout[1] == "n" else b8
    return (a8, sa), (b8, sb)


def operands(m, n, k, *, per_row=False, ue8m0=False, scale_dtype=None, seed=0):
    a = q_lhs(randn(seed_of("a", m, k, seed), (m, k)), ue8m0, scale_dtype)
    x_b = randn(seed_of("b", n, k, seed), (n, k))
    b = q_lhs(x_b, ue8m0, scale_dtype) if per_row else q_rhs(x_b, ue8m0, scale_dtype)
    return a, b


def expected(a, b, c=None):
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    return oracle.gemm(a64, b64, c), oracle.gemm_bound(a64, b64, c)


@pytest.mark.parametrize("layout", list(GEMMS))
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_layouts_and_shapes(layout, m, n, k):
    a, b = operands(m, n, k)
    ref, bound = expected(a, b)
    out_dtype = F32 if (m + n + k) % 2 else BF16  # both output dtypes over the sweep
    out = GEMMS[layout](*stored(layout, a, b), out_dtype=out_dtype)
    assert out.shape == (m, n)
    assert_matches(out, ref, bound, out_dtype)


@pytest.mark.parametrize("m,n,k", [(3, 130, 200), (128, 256, 384)])
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_default_and_explicit_out_dtype(m, n, k, out_dtype):
    a, b = operands(m, n, k, seed=1)
    ref, bound = expected(a, b)
    default = dg.fp8_gemm_nt(a, b)
    assert default.dtype == jnp.bfloat16 and default.shape == (m, n)
    assert_matches(default, ref, bound, BF16)
    out = dg.fp8_gemm_nt(a, b, out_dtype=out_dtype)
    assert out.dtype == out_dtype and out.shape == (m, n)
    assert_matches(out, ref, bound, out_dtype)


@pytest.mark.parametrize("layout", list(GEMMS))
@pytest.mark.parametrize("c_dtype", [F32, BF16])
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_with_c(layout, c_dtype, out_dtype):
    m, n, k = 3, 130, 200
    a, b = operands(m, n, k, seed=2)
    c = (10.0 * randn(seed_of("c", layout), (m, n))).astype(c_dtype)
    ref, bound = expected(a, b, c)
    out = GEMMS[layout](*stored(layout, a, b), c=c, out_dtype=out_dtype)
    assert out.shape == (m, n)
    assert_matches(out, ref, bound, out_dtype)
    # c really is added (not ignored): the result differs from the product alone by about c.
    plain = dg.fp8_gemm_nt(a, b, out_dtype=F32)
    assert oracle.calc_diff(to64(out) - to64(plain), to64(c)) < 1e-3


@pytest.mark.parametrize("m,n,k", [(128, 256, 384), (129, 257, 200)])
@pytest.mark.parametrize("c_dtype", [F32, BF16])
def test_with_c_regular_shapes(m, n, k, c_dtype):
    a, b = operands(m, n, k, seed=3)
    c = randn(seed_of("c", m, n), (m, n)).astype(c_dtype)
    ref, bound = expected(a, b, c)
    assert_matches(dg.fp8_gemm_nt(a, b, c=c, out_dtype=F32), ref, bound, F32)
    assert_matches(dg.fp8_gemm_tt(*stored("tt", a, b), c=c), ref, bound, BF16)


@pytest.mark.parametrize("layout", list(GEMMS))
@pytest.mark.parametrize("m,n,k", [(3, 130, 200), (1, 1, 16), (128, 256, 384), (5, 128, 129)])
def test_per_row_b_scales(layout, m, n, k):
    """A B scale of shape (N, kb) means per-row 1x128 scaling (the 1D1D recipe)."""
    a, b = operands(m, n, k, per_row=True, seed=4)
    assert b[1].shape == (n, oracle.kblocks(k))
    ref, bound = expected(a, b)
    assert_matches(GEMMS[layout](*stored(layout, a, b), out_dtype=F32), ref, bound, F32)


def test_per_row_and_block_scales_differ_when_n_is_128():
    """N = 128: scale (1, kb) is one 128x128 block, (128, kb) is per row; both accepted, each with its meaning."""
    m, n, k = 3, 128, 256
    a = q_lhs(randn(1, (m, k)))
    x_b = randn(2, (n, k))
    for b in (q_rhs(x_b), q_lhs(x_b)):
        ref, bound = expected(a, b)
        assert_matches(dg.fp8_gemm_nt(a, b, out_dtype=F32), ref, bound, F32)
    # The same FP8 data with the block scale broadcast to rows must give the same result as the block scale.
    b8, sb = q_rhs(x_b)
    rows = jnp.repeat(sb, n, axis=0)
    np.testing.assert_allclose(to64(dg.fp8_gemm_nt(a, (b8, rows), out_dtype=F32)),
                               to64(dg.fp8_gemm_nt(a, (b8, sb), out_dtype=F32)), rtol=1e-6, atol=0)


@pytest.mark.parametrize("layout", list(GEMMS))
@pytest.mark.parametrize("scale_dtype", [F32, UE8M0])
@pytest.mark.parametrize("per_row", [False, True])
def test_ue8m0_scales(layout, scale_dtype, per_row):
    m, n, k = 3, 130, 200
    a, b = operands(m, n, k, per_row=per_row, ue8m0=True, scale_dtype=scale_dtype, seed=5)
    assert a[1].dtype == scale_dtype and b[1].dtype == scale_dtype
    ref, bound = expected(a, b)
    for out_dtype in (BF16, F32):
        assert_matches(GEMMS[layout](*stored(layout, a, b), out_dtype=out_dtype), ref, bound, out_dtype)


def test_ue8m0_scales_regular_shape():
    a, b = operands(256, 256, 512, ue8m0=True, scale_dtype=UE8M0, seed=6)
    ref, bound = expected(a, b)
    assert_matches(dg.fp8_gemm_nt(a, b), ref, bound, BF16)


@pytest.mark.parametrize("which", ["a", "b", "both"])
@pytest.mark.parametrize("layout", ["nt", "tn"])
def test_e5m2_data(which, layout):
    m, n, k = 5, 130, 200
    a, b = operands(m, n, k, seed=7)
    if which in ("a", "both"):
        a = e5m2_pair(11, m, k, m)
    if which in ("b", "both"):
        b = e5m2_pair(12, n, k, oracle.kblocks(n))
    assert (a[0].dtype == E5M2) == (which != "b") and (b[0].dtype == E5M2) == (which != "a")
    ref, bound = expected(a, b)
    assert_matches(GEMMS[layout](*stored(layout, a, b), out_dtype=F32), ref, bound, F32)
    assert_matches(GEMMS[layout](*stored(layout, a, b)), ref, bound, BF16)


def test_e5m2_per_row_b():
    m, n, k = 4, 9, 300
    a = e5m2_pair(21, m, k, m)
    b = e5m2_pair(22, n, k, n)
    ref, bound = expected(a, b)
    assert_matches(dg.fp8_gemm_nt(a, b, out_dtype=F32), ref, bound, F32)


@pytest.mark.parametrize("layout", list(GEMMS))
def test_numpy_inputs(layout):
    """NumPy arrays with the right dtypes (ml_dtypes float8, float32 scales, c) are accepted, lists for pairs too."""
    m, n, k = 3, 130, 200
    a, b = operands(m, n, k, seed=8)
    c = randn(9, (m, n))
    ref, bound = expected(a, b, c)
    (a8, sa), (b8, sb) = stored(layout, a, b)
    np_a = [np.asarray(a8), np.asarray(sa)]
    np_b = (np.asarray(b8), np.asarray(sb))
    assert np_a[0].dtype == np.dtype(E4M3)
    out = GEMMS[layout](np_a, np_b, c=np.asarray(c), out_dtype=F32)
    assert_matches(out, ref, bound, F32)


@pytest.mark.parametrize("layout", list(GEMMS))
def test_jit(layout):
    m, n, k = 129, 130, 200
    a, b = operands(m, n, k, seed=10)
    c = randn(3, (m, n), BF16)
    ref, bound = expected(a, b, c)
    fn = jax.jit(GEMMS[layout], static_argnames=("out_dtype",))
    out = fn(*stored(layout, a, b), c=c, out_dtype=F32)
    assert_matches(out, ref, bound, F32)
    eager = GEMMS[layout](*stored(layout, a, b), c=c, out_dtype=F32)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(eager))


def test_jit_traces_shapes_only():
    """Under jit the checks see abstract values: eval_shape gives the output type without running anything."""
    a, b = operands(7, 33, 300, seed=11)
    s = jax.eval_shape(lambda a, b: dg.fp8_gemm_nn(a, b, out_dtype=F32), a, (b[0].T, b[1]))
    assert s.shape == (7, 33) and s.dtype == F32


def test_vmap_over_a_batch_of_lhs():
    m, n, k, batch = 3, 130, 200, 4
    xs = randn(12, (batch, m, k))
    a8, sa = jax.vmap(lambda x: q_lhs(x))(xs)
    b = operands(m, n, k, seed=12)[1]
    out = jax.vmap(lambda a8, sa: dg.fp8_gemm_nt((a8, sa), b, out_dtype=F32))(a8, sa)
    assert out.shape == (batch, m, n) and out.dtype == F32
    b64 = oracle.dequant_rhs(*b)
    for i in range(batch):
        a64 = oracle.dequant_lhs(a8[i], sa[i])
        assert_matches(out[i], oracle.gemm(a64, b64), oracle.gemm_bound(a64, b64), F32)


def test_vmap_over_both_operands_and_c():
    m, n, k, batch = 2, 9, 130, 3
    xa, xb = randn(13, (batch, m, k)), randn(14, (batch, n, k))
    a8, sa = jax.vmap(lambda x: q_lhs(x))(xa)
    b8, sb = jax.vmap(lambda x: q_rhs(x))(xb)
    c = randn(15, (batch, m, n))
    out = jax.vmap(lambda a8, sa, b8, sb, c: dg.fp8_gemm_tn((a8.T, sa), (b8.T, sb), c=c))(a8, sa, b8, sb, c)
    assert out.shape == (batch, m, n) and out.dtype == BF16
    for i in range(batch):
        a64, b64 = oracle.dequant_lhs(a8[i], sa[i]), oracle.dequant_rhs(b8[i], sb[i])
        assert_matches(out[i], oracle.gemm(a64, b64, c[i]), oracle.gemm_bound(a64, b64, c[i]), BF16)


# ---- gradients through the raw GEMM: the primitive's JVP is linear in the scales and in c ----

def _scale_grads_oracle(a, b, w, per_row_b):
    """d/d a_scale, d/d b_scale and d/d c of sum(w * D) for D = C + A @ B^T (float64)."""
    a8, sa = oracle.f64(a[0]), oracle.f64(a[1])
    b64 = oracle.dequant_rhs(*b)
    a64 = oracle.dequant_lhs(*a)
    b8 = oracle.f64(b[0])
    m, k = a8.shape
    n = b8.shape[0]
    kb = oracle.kblocks(k)
    g_sa = np.zeros((m, kb))
    g_sb = np.zeros(np.shape(b[1]))
    for j in range(kb):
        blk = slice(j * 128, (j + 1) * 128)
        # D[m, n] = sum_j sa[m, j] * sum_{k in j} a8[m, k] b64[n, k]
        g_sa[:, j] = np.sum(w * (a8[:, blk] @ b64[:, blk].T), axis=1)
        # contribution of block j of b row n: sb[row/blk, j] * sum_{k in j} a64[m, k] b8[n, k]
        per_n = np.sum(w * (a64[:, blk] @ b8[:, blk].T), axis=0)  # [N]
        if per_row_b:
            g_sb[:, j] = per_n
        else:
            for i in range(g_sb.shape[0]):
                g_sb[i, j] = per_n[i * 128 : (i + 1) * 128].sum()
    return g_sa, g_sb, w


@pytest.mark.parametrize("layout", ["nt", "tt"])
@pytest.mark.parametrize("per_row_b", [False, True])
def test_grad_wrt_scales_and_c(layout, per_row_b):
    m, n, k = 3, 130, 200
    a, b = operands(m, n, k, per_row=per_row_b, seed=16)
    c = randn(16, (m, n))
    w = to64(randn(17, (m, n), spread=False))

    def loss(sa, sb, c):
        (a8, _), (b8, _) = stored(layout, a, b)
        d = GEMMS[layout]((a8, sa), (b8, sb), c=c, out_dtype=F32)
        return jnp.sum(d * jnp.asarray(w, F32))

    g_sa, g_sb, g_c = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(a[1], b[1], c)
    e_sa, e_sb, e_c = _scale_grads_oracle(a, b, w, per_row_b)
    for got, exp in ((g_sa, e_sa), (g_sb, e_sb), (g_c, e_c)):
        assert got.shape == exp.shape and got.dtype == F32
        np.testing.assert_allclose(to64(got), exp, rtol=1e-4, atol=1e-4 * np.abs(exp).max())


def test_overwrite_c_changes_no_value_under_transformations():
    """overwrite_c=True is a buffer choice of the CUDA lowering: under jit, vmap (C folded into M with the
    activations, or into N with the weights), grad (of the scales and C) and a lax.scan that carries C, the values
    are those of overwrite_c=False."""
    m, n, k = 130, 256, 384
    a, b = operands(m, n, k, seed=21)
    a2, b2 = operands(2 * m, 2 * n, k, seed=22)
    a2 = jax.tree.map(lambda x: x.reshape((2, m) + x.shape[1:]), a2)
    b2 = (b2[0].reshape(2, n, k), b2[1].reshape(2, n // 128, -1))
    c, c2, w = randn(23, (m, n)), randn(24, (2, m, n)), randn(25, (m, n), spread=False)

    def gemm(a, b, c, over):
        return dg.fp8_gemm_nt(a, b, c=c, out_dtype=F32, overwrite_c=over)

    assert_same_either_way(lambda over: jax.jit(gemm, static_argnums=3)(a, b, c, over))
    assert_same_either_way(lambda over: jax.jit(jax.vmap(lambda a, c: gemm(a, b, c, over)))(a2, c2))
    assert_same_either_way(lambda over: jax.jit(jax.vmap(lambda b, c: gemm(a, b, c, over)))(b2, c2))
    loss = lambda sa, sb, c, over: jnp.sum(gemm((a[0], sa), (b[0], sb), c, over) * w)  # noqa: E731
    assert_same_either_way(lambda over: jax.jit(jax.grad(loss, argnums=(0, 1, 2)), static_argnums=3)(a[1], b[1], c,
                                                                                                     over))
    step = lambda over: lambda acc, _: (gemm(a, b, acc, over), None)  # noqa: E731
    assert_same_either_way(lambda over: jax.jit(lambda c: jax.lax.scan(step(over), c, None, length=3)[0])(c))


def test_jvp_wrt_c_and_bf16_output():
    m, n, k = 4, 6, 16
    a, b = operands(m, n, k, seed=18)
    c = randn(19, (m, n), BF16)
    t = randn(20, (m, n), BF16)
    primal, tangent = jax.jvp(lambda c: dg.fp8_gemm_nt(a, b, c=c), (c,), (t,))
    assert primal.dtype == BF16 and tangent.dtype == BF16
    np.testing.assert_allclose(to64(tangent), to64(t), rtol=2**-8)
    ref, bound = expected(a, b, c)
    assert_matches(primal, ref, bound, BF16)
