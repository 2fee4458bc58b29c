"""fp8_dot and ragged_dot: forward against x @ w / jax.lax.ragged_dot in float64, output dtype rules, batch dims,
pre-quantized weights, group_offset, and FP8 gradients against the exact ones (jit, vmap, grad, shard_map, pmap)."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, PartitionSpec as P

import jax_deepgemm as dg
import oracle
from conftest import BF16, F32, INT32_MAX, assert_matches, cosine, q_lhs, q_rhs, randn, seed_of, to64

FWD_DIFF = 2e-3  # calc_diff of the FP8 result against the exact product of the (unquantized) inputs
GRAD_COSINE = 0.995
GRAD_DIFF = 3e-3
GRAD_NORM = 6e-3  # |‖g‖ / ‖exact‖ - 1|: cosine and calc_diff hardly see a gradient scaled by 1%; this does


def assert_grad(got, exact):
    """An FP8 gradient against the exact one: direction (cosine), relative error (calc_diff) and magnitude."""
    g64, e64 = to64(got), to64(exact)
    assert g64.shape == e64.shape
    assert cosine(g64, e64) > GRAD_COSINE
    assert dg.calc_diff(g64, e64) < GRAD_DIFF
    ratio = np.linalg.norm(g64) / np.linalg.norm(e64)
    assert abs(ratio - 1) < GRAD_NORM, f"gradient norm ratio {ratio}"


# jitted entry points: one compilation per shape instead of one per eager op (eager calls are tested below too)
fp8_dot = jax.jit(dg.fp8_dot)
ragged_dot = jax.jit(dg.ragged_dot, static_argnames=("precision", "preferred_element_type"))


def dot64(x, w):
    return to64(x) @ to64(w)


# ---------------------------------------------------------------- fp8_dot forward

@pytest.mark.parametrize("x_shape,n", [((1, 200), 130), ((3, 16), 1), ((128, 256), 384), ((2, 3, 129), 130),
                                       ((200,), 7), ((2, 1, 5, 300), 64)])
@pytest.mark.parametrize("x_dtype,w_dtype", [(F32, F32), (BF16, BF16), (BF16, F32)])
def test_fp8_dot_forward(x_shape, n, x_dtype, w_dtype):
    k = x_shape[-1]
    x = randn(seed_of("x", x_shape), x_shape, x_dtype, spread=False)
    w = randn(seed_of("w", k, n), (k, n), w_dtype, spread=False)
    out = fp8_dot(x, w)
    assert out.dtype == x_dtype and out.shape == x_shape[:-1] + (n,)
    expected = dot64(x.reshape(-1, k), w).reshape(out.shape)
    assert dg.calc_diff(out, expected) < FWD_DIFF
    # It is fp8_gemm_nt on the on-the-fly quantization, up to the output rounding.
    exact = dg.fp8_gemm_nt(q_lhs(x.reshape(-1, k)), q_rhs(w.T), out_dtype=F32)
    a64, b64 = oracle.dequant_lhs(*q_lhs(x.reshape(-1, k))), oracle.dequant_rhs(*q_rhs(w.T))
    assert_matches(exact, oracle.gemm(a64, b64), oracle.gemm_bound(a64, b64), F32)
    rtol = 2.0**-8 if x_dtype == BF16 else 1e-6
    np.testing.assert_allclose(to64(out).reshape(-1, n), to64(exact), rtol=rtol, atol=1e-6)


def test_fp8_dot_regular_shape_bf16_accuracy():
    x = randn(1, (256, 512), BF16, spread=False)
    w = randn(2, (512, 256), BF16, spread=False)
    assert dg.calc_diff(fp8_dot(x, w), dot64(x, w)) < FWD_DIFF


def test_fp8_dot_prequantized_weight():
    m, k, n = 5, 300, 130
    x = randn(3, (m, k), BF16)
    w = randn(4, (k, n), F32)
    pair = q_rhs(w.T)
    assert pair[0].shape == (n, k) and pair[1].shape == (2, 3)
    out = dg.fp8_dot(x, pair)
    assert out.dtype == BF16 and out.shape == (m, n)
    np.testing.assert_array_equal(np.asarray(out, np.float32), np.asarray(dg.fp8_dot(x, w), np.float32))
    assert dg.calc_diff(out, dot64(x, w)) < FWD_DIFF
    # leading dims and jit with the pair
    xb = randn(5, (2, 3, k), F32)
    outb = jax.jit(dg.fp8_dot)(xb, pair)
    assert outb.shape == (2, 3, n) and outb.dtype == F32
    assert dg.calc_diff(outb, dot64(xb.reshape(-1, k), w).reshape(2, 3, n)) < FWD_DIFF
    # the gradient w.r.t. x flows through a pre-quantized weight
    r = randn(6, (m, n), F32)
    gx = jax.grad(lambda x: jnp.sum(dg.fp8_dot(x, pair).astype(F32) * r))(x.astype(F32))
    expected = to64(r) @ oracle.dequant_rhs(*pair)
    assert gx.dtype == F32 and cosine(gx, expected) > GRAD_COSINE
    # the pair itself is frozen (documented): zero gradients of its own dtypes
    g_data, g_scale = jax.grad(lambda p: jnp.sum(dg.fp8_dot(x, p).astype(F32) * r))(pair)
    assert g_data.dtype == pair[0].dtype and g_scale.dtype == pair[1].dtype
    assert not np.any(np.asarray(g_data, np.float32)) and not np.any(np.asarray(g_scale))


def test_fp8_dot_numpy_inputs():
    x, w = np.asarray(randn(7, (3, 200))), np.asarray(randn(8, (200, 9)))
    out = dg.fp8_dot(x, w)
    assert out.dtype == F32 and out.shape == (3, 9)
    assert dg.calc_diff(out, x.astype(np.float64) @ w.astype(np.float64)) < FWD_DIFF


# ---------------------------------------------------------------- fp8_dot gradients

def _loss_fp8(x, w, r):
    return jnp.sum(fp8_dot(x, w).astype(F32) * r)


@pytest.mark.parametrize("m,k,n", [(3, 200, 130), (128, 256, 384), (1, 16, 1)])
@pytest.mark.parametrize("dtype", [F32, BF16])
def test_fp8_dot_grads(m, k, n, dtype):
    x = randn(seed_of("gx", m, k), (m, k), dtype, spread=False)
    w = randn(seed_of("gw", k, n), (k, n), dtype, spread=False)
    r = randn(seed_of("gr", m, n), (m, n), F32, spread=False)
    gx, gw = jax.jit(jax.grad(_loss_fp8, argnums=(0, 1)))(x, w, r)
    assert gx.dtype == dtype and gx.shape == x.shape and gw.dtype == dtype and gw.shape == w.shape
    ex, ew = to64(r) @ to64(w).T, to64(x).T @ to64(r)
    assert_grad(gx, ex)
    assert_grad(gw, ew)


def test_fp8_dot_grads_agree_with_float32_autodiff():
    x = randn(9, (4, 3, 200), F32, spread=False)
    w = randn(10, (200, 130), F32, spread=False)
    r = randn(11, (4, 3, 130), F32, spread=False)
    gx, gw = jax.jit(jax.grad(_loss_fp8, argnums=(0, 1)))(x, w, r)
    with jax.default_matmul_precision("highest"):
        fx, fw = jax.grad(lambda x, w: jnp.sum((x @ w) * r), argnums=(0, 1))(x, w)
    assert gx.shape == (4, 3, 200) and gw.shape == (200, 130)
    assert_grad(gx, fx)
    assert_grad(gw, fw)


def test_fp8_dot_vmap_grad():
    b, m, k, n = 3, 4, 200, 9
    xs = randn(12, (b, m, k), F32, spread=False)
    w = randn(13, (k, n), F32, spread=False)
    r = randn(14, (m, n), F32, spread=False)
    grad = jax.jit(jax.grad(_loss_fp8, argnums=(0, 1)))
    gx, gw = jax.jit(jax.vmap(grad, in_axes=(0, None, None)))(xs, w, r)
    assert gx.shape == (b, m, k) and gw.shape == (b, k, n)
    for i in range(b):
        lx, lw = grad(xs[i], w, r)
        np.testing.assert_allclose(to64(gx[i]), to64(lx), rtol=1e-5, atol=1e-6 * np.abs(to64(lx)).max())
        np.testing.assert_allclose(to64(gw[i]), to64(lw), rtol=1e-5, atol=1e-6 * np.abs(to64(lw)).max())
        assert cosine(gw[i], to64(xs[i]).T @ to64(r)) > GRAD_COSINE


def test_fp8_dot_jit_matches_eager_and_value_and_grad():
    x, w = randn(15, (3, 130), BF16), randn(16, (130, 5), BF16)
    np.testing.assert_array_equal(np.asarray(jax.jit(dg.fp8_dot)(x, w), np.float32),
                                  np.asarray(dg.fp8_dot(x, w), np.float32))
    r = randn(17, (3, 5))
    value, (gx, gw) = jax.value_and_grad(_loss_fp8, argnums=(0, 1))(x, w, r)
    assert value == pytest.approx(float(np.sum(dot64(x, w) * to64(r))), rel=0.05)
    assert gx.dtype == BF16 and gw.dtype == BF16


def _mesh():
    return Mesh(np.asarray(jax.devices()[:1]), ("d",))


def test_fp8_dot_and_ragged_dot_shard_map_forward():
    x, w = randn(18, (4, 200)), randn(19, (200, 130))
    f = jax.jit(jax.shard_map(dg.fp8_dot, mesh=_mesh(), in_specs=(P("d"), P()), out_specs=P("d")))
    np.testing.assert_allclose(to64(f(x, w)), to64(dg.fp8_dot(x, w)), rtol=1e-6)
    sizes = jnp.asarray([1, 3], jnp.int32)
    rhs = randn(20, (2, 200, 9))
    h = jax.jit(jax.shard_map(lambda l, r: dg.ragged_dot(l, r, sizes), mesh=_mesh(), in_specs=(P("d"), P()),
                              out_specs=P("d")))
    np.testing.assert_allclose(to64(h(x, rhs)), to64(dg.ragged_dot(x, rhs, sizes)), rtol=1e-6)


def _shard_map_grads(check_vma):
    x, w = randn(18, (4, 200)), randn(19, (200, 130))

    def local(x, w):
        gx, gw = jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w)), argnums=(0, 1))(x, w)
        return gx, jax.lax.psum(gw, "d")

    f = jax.jit(jax.shard_map(local, mesh=_mesh(), in_specs=(P("d"), P()), out_specs=(P("d"), P()),
                              check_vma=check_vma))
    gx, gw = f(x, w)
    ones = np.ones((4, 130))
    assert cosine(gx, ones @ to64(w).T) > GRAD_COSINE and cosine(gw, to64(x).T @ ones) > GRAD_COSINE


def test_fp8_dot_shard_map_grad_unchecked_vma():
    _shard_map_grads(check_vma=False)


def test_fp8_dot_shard_map_grad():
    _shard_map_grads(check_vma=True)


def test_fp8_dot_pmap_grad():
    x, w = randn(18, (4, 200)), randn(19, (200, 130))
    g = jax.pmap(jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w))), in_axes=(0, None))(x[None], w)
    assert g.shape == (1, 4, 200)
    assert cosine(g[0], np.ones((4, 130)) @ to64(w).T) > GRAD_COSINE


# ---------------------------------------------------------------- ragged_dot forward

RAGGED_CASES = [
    # (M, K, N, group sizes)
    (300, 200, 130, [1, 200, 0, 99]),
    (256, 256, 384, [128, 128]),
    (7, 16, 1, [0, 0, 7]),
    (8, 129, 9, [1] * 8),
    (100, 200, 130, [10, 20, 30]),           # rows past the sum
    (50, 200, 130, [INT32_MAX, 3]),          # cut at M
]


@pytest.mark.parametrize("m,k,n,sizes", RAGGED_CASES)
def test_ragged_dot_forward(m, k, n, sizes):
    g = len(sizes)
    lhs = randn(seed_of("lhs", m, k), (m, k), BF16, spread=False)
    rhs = randn(seed_of("rhs", g, k, n), (g, k, n), BF16, spread=False)
    sizes = np.asarray(sizes, np.int32)
    out = ragged_dot(lhs, rhs, sizes)
    assert out.shape == (m, n) and out.dtype == BF16
    expected = oracle.ragged_dot(to64(lhs), to64(rhs), sizes)
    assert dg.calc_diff(out, expected) < FWD_DIFF
    end = oracle.ragged_bounds(sizes, m)[-1][1]
    assert np.all(to64(out)[end:] == 0)
    if sizes.astype(np.int64).sum() <= m:  # jax.lax.ragged_dot itself agrees with the oracle
        with jax.default_matmul_precision("highest"):
            lax_out = jax.lax.ragged_dot(lhs.astype(F32), rhs.astype(F32), jnp.asarray(sizes))
        assert dg.calc_diff(lax_out, expected) < 1e-9
        assert dg.calc_diff(out, lax_out) < FWD_DIFF


@pytest.mark.parametrize("lhs_dtype,rhs_dtype,preferred", [
    (BF16, BF16, None), (F32, BF16, None), (BF16, F32, None), (F32, F32, None),
    (BF16, BF16, F32), (F32, F32, BF16), (BF16, BF16, jnp.float16),
    (BF16, jnp.float16, None), (jnp.float16, BF16, None), (jnp.float16, jnp.float16, None),
])
def test_ragged_dot_dtype_rules(lhs_dtype, rhs_dtype, preferred):
    m, k, n = 6, 200, 9
    lhs = randn(20, (m, k), lhs_dtype)
    rhs = randn(21, (2, k, n), rhs_dtype)
    sizes = jnp.asarray([2, 4], jnp.int32)
    out = ragged_dot(lhs, rhs, sizes, preferred_element_type=preferred)
    expected_dtype = jax.lax.ragged_dot(lhs, rhs, sizes, preferred_element_type=preferred).dtype
    assert out.dtype == expected_dtype
    assert dg.calc_diff(out, oracle.ragged_dot(to64(lhs), to64(rhs), sizes)) < FWD_DIFF


def test_ragged_dot_positional_signature_and_precision():
    m, k, n = 6, 200, 9
    lhs, rhs = randn(22, (m, k)), randn(23, (3, k, n))
    sizes = jnp.asarray([3, 0, 3], jnp.int16)  # other integer dtypes are converted
    a = dg.ragged_dot(lhs, rhs, sizes, jax.lax.Precision.HIGHEST, F32, None)
    b = dg.ragged_dot(lhs=lhs, rhs=rhs, group_sizes=sizes.astype(jnp.int32), precision=None)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("offset", [0, 1, 2, 3, 7, -1])
def test_ragged_dot_group_offset(offset):
    """Rows of groups before group_offset are zeros (the rest as without it); gradients follow."""
    m, k, n = 40, 200, 9
    sizes = np.asarray([10, 0, 20, 5], np.int32)
    lhs, rhs = randn(24, (m, k), F32, spread=False), randn(25, (4, k, n), F32, spread=False)
    r = randn(26, (m, n), F32, spread=False)
    off = jnp.asarray([offset], jnp.int32)
    out = ragged_dot(lhs, rhs, sizes, group_offset=off)
    expected = oracle.ragged_dot(to64(lhs), to64(rhs), sizes, group_offset=offset)
    zero_rows = (np.arange(m) < sum(sizes[: max(offset, 0)])) | (np.arange(m) >= sizes.sum())
    assert np.all(to64(out)[zero_rows] == 0)
    if expected.any():
        assert dg.calc_diff(out, expected) < FWD_DIFF
    full = ragged_dot(lhs, rhs, sizes)
    np.testing.assert_array_equal(to64(out)[~zero_rows], to64(full)[~zero_rows])
    gl, gr = jax.jit(jax.grad(lambda l, w, o: jnp.sum(dg.ragged_dot(l, w, sizes, group_offset=o) * r),
                              argnums=(0, 1)))(lhs, rhs, off)
    el, er = oracle.ragged_dot_grads(to64(lhs), to64(rhs), sizes, to64(r), group_offset=offset)
    assert np.all(to64(gl)[zero_rows] == 0)
    for gi in range(min(max(offset, 0), 4)):
        assert np.all(to64(gr[gi]) == 0)
    if el.any():
        assert cosine(gl, el) > GRAD_COSINE and cosine(gr, er) > GRAD_COSINE


# ---------------------------------------------------------------- ragged_dot gradients

@pytest.mark.parametrize("m,k,n,sizes", [(300, 200, 130, [1, 200, 0, 99]), (256, 256, 384, [128, 128]),
                                         (100, 200, 130, [10, 20, 30]), (9, 129, 7, [3, -2, INT32_MAX])])
@pytest.mark.parametrize("dtype", [F32, BF16])
def test_ragged_dot_grads(m, k, n, sizes, dtype):
    g = len(sizes)
    sizes = np.asarray(sizes, np.int32)
    lhs = randn(seed_of("glhs", m, k), (m, k), dtype, spread=False)
    rhs = randn(seed_of("grhs", g, k, n), (g, k, n), dtype, spread=False)
    r = randn(seed_of("gr", m, n), (m, n), F32, spread=False)
    grad = jax.jit(jax.grad(lambda l, w: jnp.sum(dg.ragged_dot(l, w, sizes).astype(F32) * r), argnums=(0, 1)))
    gl, gr = grad(lhs, rhs)
    assert gl.dtype == dtype and gl.shape == lhs.shape and gr.dtype == dtype and gr.shape == rhs.shape
    el, er = oracle.ragged_dot_grads(to64(lhs), to64(rhs), sizes, to64(r))
    assert_grad(gl, el)
    assert_grad(gr, er)
    for gi, (start, end) in enumerate(oracle.ragged_bounds(sizes, m)):
        if start == end:  # an empty group gets an exactly zero weight gradient
            assert np.all(to64(gr[gi]) == 0)
        else:
            assert cosine(gr[gi], er[gi]) > GRAD_COSINE
    end = oracle.ragged_bounds(sizes, m)[-1][1]
    assert np.all(to64(gl)[end:] == 0)


@pytest.mark.parametrize("op", ["fp8_dot", "ragged_dot"])
def test_one_argument_grads_equal_the_full_grads(op):
    """The forward rules see which arguments are differentiated (they skip the dgrad's weight layout, or the wgrad's
    saved input, when unused): the gradient of one argument equals that argument's part of both, bit for bit, and an
    unused output gets zero gradients."""
    m, k, n = 300, 256, 136
    x = randn(seed_of("one-x", op), (m, k), BF16, spread=False)
    if op == "fp8_dot":
        w = randn(seed_of("one-w", op), (k, n), F32, spread=False)
        fn = fp8_dot
    else:
        w = randn(seed_of("one-w", op), (3, k, n), F32, spread=False)
        fn = partial(dg.ragged_dot, group_sizes=jnp.asarray([100, 0, 150], jnp.int32))
    r = randn(seed_of("one-r", op), (m, n), F32, spread=False)
    loss = lambda x, w: jnp.sum(fn(x, w).astype(F32) * r)  # noqa: E731
    both = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w)
    for i in (0, 1):
        np.testing.assert_array_equal(to64(jax.jit(jax.grad(loss, argnums=i))(x, w)), to64(both[i]))
    def unused_output(x, w):
        fn(x, w)
        return jnp.sum(x.astype(F32)) + 0 * jnp.sum(w)
    unused = jax.jit(jax.grad(unused_output, argnums=(0, 1)))(x, w)
    np.testing.assert_array_equal(to64(unused[0]), 1.0)
    np.testing.assert_array_equal(to64(unused[1]), 0.0)


EMPTY_CASES = [  # (x or lhs, w: fp8_dot [K, N] / ragged_dot [G, K, N]) with an empty dimension
    ("fp8_dot", (0, 256), (256, 130)), ("fp8_dot", (3, 0, 200), (200, 130)), ("fp8_dot", (5, 0), (0, 130)),
    ("fp8_dot", (5, 200), (200, 0)), ("fp8_dot_pair", (2, 0, 256), (256, 130)),
    ("ragged_dot", (0, 256), (2, 256, 130)), ("ragged_dot", (5, 0), (2, 0, 130)),
    ("ragged_dot", (5, 256), (0, 256, 130)), ("ragged_dot", (5, 256), (2, 256, 0))]


@pytest.mark.parametrize("op,x_shape,w_shape", EMPTY_CASES)
def test_empty_dimensions_give_what_jax_gives(op, x_shape, w_shape):
    """An empty dimension (no token, no expert, K = 0, N = 0) gives x @ w's / jax.lax.ragged_dot's result (empty, or
    zeros) and gradients, eagerly and under jit; no kernel is called."""
    x = randn(seed_of("empty-x", op), x_shape, BF16)
    w = randn(seed_of("empty-w", op), w_shape, F32)
    sizes = jnp.asarray([3, 1][:w_shape[0]] if op == "ragged_dot" else [], jnp.int32)
    if op == "fp8_dot":
        ours, exact = dg.fp8_dot, lambda x, w: jnp.matmul(x, w.astype(BF16))
    elif op == "fp8_dot_pair":
        ours = lambda x, w: dg.fp8_dot(x, q_rhs(w.T))  # noqa: E731
        exact = lambda x, w: jnp.matmul(x, w.astype(BF16))  # noqa: E731
    else:
        ours = lambda x, w: dg.ragged_dot(x, w, sizes)  # noqa: E731
        # (the result type: f32). On the CPU: XLA's GPU lowering of jax.lax.ragged_dot fails on zero groups ("failed
        # to legalize unresolved materialization", jax 0.11.2 on an H100, 2026-12-05).
        cpu = jax.devices("cpu")[0]
        exact = lambda x, w: jax.lax.ragged_dot(*(jax.device_put(v, cpu) for v in (x.astype(F32), w, sizes)))  # noqa
    for fn in (ours, jax.jit(ours)):
        got, want = fn(x, w), exact(x, w)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(to64(got), to64(want))
    if op != "fp8_dot_pair":  # (a pre-quantized weight has no gradient)
        loss = lambda f: lambda x, w: jnp.sum(f(x, w).astype(F32))  # noqa: E731
        grads = jax.jit(jax.grad(loss(ours), argnums=(0, 1)))(x, w)
        for g, e, arg in zip(grads, jax.grad(loss(exact), argnums=(0, 1))(x, w), (x, w)):
            assert g.shape == arg.shape and g.dtype == arg.dtype
            np.testing.assert_array_equal(to64(g), to64(e))


def test_ragged_dot_grads_agree_with_float32_autodiff():
    m, k, n = 64, 200, 130
    sizes = jnp.asarray([20, 30, 14], jnp.int32)
    lhs, rhs = randn(27, (m, k), spread=False), randn(28, (3, k, n), spread=False)
    r = randn(29, (m, n), spread=False)
    gl, gr = jax.jit(jax.grad(lambda l, w: jnp.sum(dg.ragged_dot(l, w, sizes) * r), argnums=(0, 1)))(lhs, rhs)
    with jax.default_matmul_precision("highest"):
        fl, fr = jax.grad(lambda l, w: jnp.sum(jax.lax.ragged_dot(l, w, sizes) * r), argnums=(0, 1))(lhs, rhs)
    assert_grad(gl, fl)
    assert_grad(gr, fr)


def test_ragged_dot_jit_vmap_grad():
    b, m, k, n = 3, 20, 200, 9
    lhs = randn(30, (b, m, k), F32, spread=False)
    rhs = randn(31, (2, k, n), F32, spread=False)
    sizes = jnp.asarray([12, 8], jnp.int32)
    r = randn(32, (m, n), F32, spread=False)
    grad = jax.jit(jax.grad(lambda l, w, s: jnp.sum(dg.ragged_dot(l, w, s) * r), argnums=(0, 1)))
    gl, gr = jax.jit(jax.vmap(grad, in_axes=(0, None, None)))(lhs, rhs, sizes)
    assert gl.shape == (b, m, k) and gr.shape == (b, 2, k, n)
    for i in range(b):
        el, er = oracle.ragged_dot_grads(to64(lhs[i]), to64(rhs), sizes, to64(r))
        assert cosine(gl[i], el) > GRAD_COSINE and cosine(gr[i], er) > GRAD_COSINE
        ll, lr = grad(lhs[i], rhs, sizes)
        np.testing.assert_allclose(to64(gl[i]), to64(ll), rtol=1e-5, atol=1e-6 * np.abs(to64(ll)).max())
        np.testing.assert_allclose(to64(gr[i]), to64(lr), rtol=1e-5, atol=1e-6 * np.abs(to64(lr)).max())
    # vmap over the group sizes as well (device data per batch element)
    sizes_b = jnp.asarray([[12, 8], [0, 20], [5, 0]], jnp.int32)
    out = jax.jit(jax.vmap(dg.ragged_dot, in_axes=(0, None, 0)))(lhs, rhs, sizes_b)
    for i in range(b):
        assert dg.calc_diff(out[i], oracle.ragged_dot(to64(lhs[i]), to64(rhs), sizes_b[i])) < FWD_DIFF


# ---------------------------------------------------------------- dispatched_ragged_dot

@pytest.mark.parametrize("tokens,top_k,sizes,k", [(300, 3, [100, 0, 500, 300], 256), (200, 1, [50, 120, 0], 256),
                                                   (64, 4, [256], 256), (40, 2, [30, 50], 130)],
                         ids=["top3", "top1_pairs_past_the_groups", "one_group", "rows_not_whole_words"])
def test_dispatched_ragged_dot_equals_ragged_dot_of_the_dispatch(tokens, top_k, sizes, k):
    """The row gather folded into the FP8 operands: ragged_dot over x[order // top_k]'s values and gradients, bit
    for bit (each argument's alone too), and the forward against the float64 oracle."""
    from jax_deepgemm.differentiable import dispatched_ragged_dot
    from jax_deepgemm.nn.experts import dispatch

    n = 136
    x = randn(seed_of("disp-x", tokens), (tokens, k), BF16, spread=False)
    w = randn(seed_of("disp-w", tokens), (len(sizes), k, n), F32, spread=False)
    order = jnp.asarray(np.random.default_rng(seed_of("disp-order", tokens)).permutation(tokens * top_k), jnp.int32)
    group_sizes = jnp.asarray(sizes, jnp.int32)
    r = randn(seed_of("disp-r", tokens), (tokens * top_k, n), F32, spread=False)
    folded = lambda x, w: dispatched_ragged_dot(x, order, top_k, w, group_sizes)  # noqa: E731
    copied = lambda x, w: dg.ragged_dot(dispatch(x, order, top_k), w, group_sizes,  # noqa: E731
                                        preferred_element_type=x.dtype)
    got, want = jax.jit(folded)(x, w), jax.jit(copied)(x, w)
    assert got.dtype == BF16 and got.shape == (tokens * top_k, n)
    np.testing.assert_array_equal(to64(got), to64(want))
    rows = np.asarray(order) // top_k
    assert dg.calc_diff(got, oracle.ragged_dot(to64(x)[rows], to64(w), group_sizes)) < FWD_DIFF
    for argnums in ((0, 1), 0, 1):
        grads = [jax.jit(jax.grad(lambda x, w: jnp.sum(fn(x, w).astype(F32) * r), argnums=argnums))(x, w)
                 for fn in (folded, copied)]
        for g_folded, g_copied in zip(*(g if isinstance(g, tuple) else (g,) for g in grads)):
            np.testing.assert_array_equal(to64(g_folded), to64(g_copied))


def test_dispatched_ragged_dot_bad_input_is_named():
    from jax_deepgemm.differentiable import dispatched_ragged_dot

    x, w, sizes = jnp.ones((8, 128), BF16), jnp.ones((2, 128, 16), F32), jnp.asarray([4, 4], jnp.int32)
    with pytest.raises(ValueError, match=r"dispatched_ragged_dot: order"):
        dispatched_ragged_dot(x, jnp.arange(8, dtype=jnp.int32), 2, w, sizes)  # [T * top_k] = [16]
    with pytest.raises(ValueError, match=r"dispatched_ragged_dot: top_k must be a positive int, got 0"):
        dispatched_ragged_dot(x, jnp.arange(8, dtype=jnp.int32), 0, w, sizes)
    with pytest.raises(ValueError, match=r"dispatched_ragged_dot: top_k must be a positive int, got True"):
        dispatched_ragged_dot(x, jnp.arange(8, dtype=jnp.int32), True, w, sizes)
    np.testing.assert_array_equal(  # a NumPy integer is a static int too
        to64(dispatched_ragged_dot(x, jnp.arange(8, dtype=jnp.int32), np.int64(1), w, sizes)),
        to64(dispatched_ragged_dot(x, jnp.arange(8, dtype=jnp.int32), 1, w, sizes)))
    with pytest.raises(ValueError, match=r"dispatched_ragged_dot: K"):
        dispatched_ragged_dot(x, jnp.arange(8, dtype=jnp.int32), 1, jnp.ones((2, 64, 16), F32), sizes)


# ---------------------------------------------------------------- combined_ragged_dot

@pytest.mark.parametrize("tokens,top_k,sizes,k", [(300, 3, [100, 0, 500, 300], 256), (200, 1, [50, 120, 0], 256),
                                                   (64, 4, [256], 256), (40, 2, [30, 50], 130)],
                         ids=["top3", "top1_pairs_past_the_groups", "one_group", "rows_not_whole_words"])
def test_combined_ragged_dot_equals_the_slot_sum_of_ragged_dot(tokens, top_k, sizes, k):
    """Each token's output rows summed, with the backward's gather folded into the FP8 operands: the slot sum of
    ragged_dot's values and gradients, bit for bit (each argument's alone too), and the forward against the float64
    oracle."""
    from jax_deepgemm.differentiable import combined_ragged_dot
    from jax_deepgemm.nn.experts import sum_slots

    n = 136
    h = randn(seed_of("comb-h", tokens), (tokens * top_k, k), BF16, spread=False)
    w = randn(seed_of("comb-w", tokens), (len(sizes), k, n), F32, spread=False)
    order = jnp.asarray(np.random.default_rng(seed_of("comb-order", tokens)).permutation(tokens * top_k), jnp.int32)
    group_sizes = jnp.asarray(sizes, jnp.int32)
    r = randn(seed_of("comb-r", tokens), (tokens, n), F32, spread=False)
    folded = lambda h, w: combined_ragged_dot(h, order, top_k, w, group_sizes)  # noqa: E731
    summed = lambda h, w: sum_slots(dg.ragged_dot(h, w, group_sizes, preferred_element_type=h.dtype),  # noqa: E731
                                    order, top_k)
    got, want = jax.jit(folded)(h, w), jax.jit(summed)(h, w)
    assert got.dtype == BF16 and got.shape == (tokens, n)
    np.testing.assert_array_equal(to64(got), to64(want))
    per_pair = np.zeros((tokens * top_k, n))
    per_pair[np.asarray(order)] = oracle.ragged_dot(to64(h), to64(w), group_sizes)
    assert dg.calc_diff(got, per_pair.reshape(tokens, top_k, n).sum(axis=1)) < FWD_DIFF
    for argnums in ((0, 1), 0, 1):
        grads = [jax.jit(jax.grad(lambda h, w: jnp.sum(fn(h, w).astype(F32) * r), argnums=argnums))(h, w)
                 for fn in (folded, summed)]
        for g_folded, g_summed in zip(*(g if isinstance(g, tuple) else (g,) for g in grads)):
            np.testing.assert_array_equal(to64(g_folded), to64(g_summed))


def test_combined_ragged_dot_bad_input_is_named():
    from jax_deepgemm.differentiable import combined_ragged_dot

    h, w, sizes = jnp.ones((8, 128), BF16), jnp.ones((2, 128, 16), F32), jnp.asarray([4, 4], jnp.int32)
    order = jnp.arange(8, dtype=jnp.int32)
    with pytest.raises(ValueError, match=r"combined_ragged_dot: order"):
        combined_ragged_dot(h, order[:4], 2, w, sizes)
    with pytest.raises(ValueError, match=r"combined_ragged_dot: lhs \[T \* top_k, K\] has 8 rows, not a multiple "
                                         r"of top_k = 3"):
        combined_ragged_dot(h, order, 3, w, sizes)
    with pytest.raises(ValueError, match=r"combined_ragged_dot: top_k must be a positive int, got -1"):
        combined_ragged_dot(h, order, -1, w, sizes)
    with pytest.raises(ValueError, match=r"combined_ragged_dot: K"):
        combined_ragged_dot(h, order, 2, jnp.ones((2, 64, 16), F32), sizes)
    with pytest.raises(ValueError, match=r"combined_ragged_dot: group_sizes"):
        combined_ragged_dot(h, order, 2, w, sizes[:1])


@pytest.mark.parametrize("op", ["dispatched", "combined"])
def test_moe_gemms_read_any_order_safely(op):
    """`order` is device data: values that are no permutation (negative, past the pairs, repeated, int32's extremes)
    mean nothing, but the forward and both gradients still run and read only inside their operands (finite results;
    the kernels' row maps clamp or read zero rows, the gathers clamp)."""
    from jax_deepgemm.differentiable import combined_ragged_dot, dispatched_ragged_dot

    tokens, top_k, k, n = 40, 2, 256, 136
    pairs = tokens * top_k
    bad = np.random.default_rng(seed_of("order-bad", op)).integers(-3 * pairs, 3 * pairs, pairs)
    bad[:4] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max, 0, 0]
    order = jnp.asarray(bad, jnp.int32)
    sizes = jnp.asarray([30, 0, 50], jnp.int32)
    lhs = randn(seed_of("order-lhs", op), (tokens if op == "dispatched" else pairs, k), BF16, spread=False)
    w = randn(seed_of("order-w", op), (3, k, n), F32, spread=False)
    fn = dispatched_ragged_dot if op == "dispatched" else combined_ragged_dot
    out, grads = jax.jit(jax.value_and_grad(lambda a, b: jnp.sum(fn(a, order, top_k, b, sizes).astype(F32) ** 2),
                                            argnums=(0, 1)))(lhs, w)
    assert np.isfinite(float(out))
    for g, a in zip(grads, (lhs, w)):
        assert g.shape == a.shape and np.isfinite(to64(g)).all()


def test_second_derivatives_say_they_are_not_supported():
    """The FP8 backward passes quantize (and keep FP8 residuals), which have no useful derivative: grad of grad and
    Hessian-vector products raise an error that says so (not JAX's bare 'Differentiation rule ... not implemented')."""
    from jax_deepgemm import nn

    x, w = randn(40, (8, 256)), randn(41, (256, 130))
    ws, sizes = randn(42, (2, 256, 130)), jnp.asarray([3, 5], jnp.int32)
    losses = {"fp8_dot": lambda x: jnp.sum(dg.fp8_dot(x, w) ** 2),
              "ragged_dot": lambda x: jnp.sum(dg.ragged_dot(x, ws, sizes) ** 2),
              "moe": lambda x: jnp.sum(nn.moe(x, randn(43, (256, 4)), randn(44, (4, 256, 256)),
                                              randn(45, (4, 128, 256)), top_k=2) ** 2)}
    for name, loss in losses.items():
        jax.grad(loss)(x)  # once: fine
        for second in (lambda: jax.grad(lambda x: jnp.sum(jax.grad(loss)(x)))(x),
                       lambda: jax.jvp(jax.grad(loss), (x,), (x,))):
            with pytest.raises(TypeError, match="differentiable once.*second derivatives"):
                second()
