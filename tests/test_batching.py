"""vmap of every op against a Python loop of the op, over each operand combination (batch axes first or not, nested
vmap, vmap of the FP8 gradients), and the jaxpr check that the batch is folded into one call: no primitive of ours
runs inside a loop."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax.extend.core import jaxprs_in_params

import jax_deepgemm as dg
from conftest import (BF16, F32, F32_RTOL_KERNELS, INT32_MAX, kernels_active, q_lhs, q_lhs_batched, q_rhs,
                      q_rhs_batched, randn, to64)
from jax_deepgemm import primitives

OURS = {f.primitive.name for f in primitives.FAMILIES}
LOOPS = {"scan", "while"}


# ---------------------------------------------------------------- helpers

def _calls(jaxpr, inside_loop=False, found=None):
    """[(primitive name, inside a loop?)] for our primitives, through every nested jaxpr."""
    found = [] if found is None else found
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in OURS:
            found.append((eqn.primitive.name, inside_loop))
        for sub in jaxprs_in_params(eqn.params):
            _calls(getattr(sub, "jaxpr", sub), inside_loop or eqn.primitive.name in LOOPS, found)
    return found


def assert_folded(fn, *args, expect):
    """The batched program calls our primitives `expect` (a list of names, in order) and none inside a loop."""
    calls = _calls(jax.make_jaxpr(fn)(*args).jaxpr)
    assert not [c for c in calls if c[1]], f"a GEMM runs inside a loop: {calls}"
    assert [c[0] for c in calls] == ["jax_deepgemm_" + e for e in expect], calls


def _take(tree, axes, i):
    """Element i of `tree` batched as vmap's in_axes prefix `axes` says."""
    if isinstance(axes, tuple):
        return type(tree)(_take(t, ax, i) for t, ax in zip(tree, axes))
    return jax.tree.map(lambda x: x if axes is None else jnp.take(x, i, axis=axes), tree)


def looped(fn, in_axes, args, size, out_axis=0):
    outs = [fn(*_take(args, in_axes, i)) for i in range(size)]
    return jax.tree.map(lambda *xs: jnp.stack(xs, axis=out_axis), *outs)


def assert_same(got, expected, rtol=2e-6):
    """Batched against looped: the same products, so equal up to float32 summation order (bf16: one rounding). The
    Hopper kernels accumulate FP8 products with a reduced mantissa and pick tiles per shape, so a folded call (another
    shape) may differ from the looped ones by the kernels' tolerance."""
    if isinstance(got, tuple):
        for x, y in zip(got, expected, strict=True):
            assert_same(x, y, rtol)
        return
    g, e = to64(got), to64(expected)
    assert g.shape == e.shape and got.dtype == expected.dtype
    rtol = max(rtol, F32_RTOL_KERNELS) if kernels_active() else rtol
    # bf16: both sides rounded once from float32 sums, so up to one ulp (2^-7 relative) apart
    tol = rtol * np.abs(e).max() + (2.0**-7 * np.abs(e) if got.dtype == BF16 else 0)
    np.testing.assert_array_less(np.abs(g - e), tol + 1e-30)


def check(fn, in_axes, args, size, expect, out_axes=0):
    batched = jax.vmap(fn, in_axes=in_axes, out_axes=out_axes)
    assert_folded(batched, *args, expect=expect)
    assert_same(jax.jit(batched)(*args), looped(jax.jit(fn), in_axes, args, size, out_axes))


def _lhs(seed, b, m, k, axis=0):
    """A batch of per-token quantized [M, K] with the batch at `axis` of data and scale."""
    data, scale = q_lhs_batched(randn(seed, (b, m, k)))
    return jnp.moveaxis(data, 0, axis), jnp.moveaxis(scale, 0, axis)


def _rhs(seed, b, n, k, per_row=False, axis=0):
    x = randn(seed, (b, n, k))
    data, scale = q_lhs_batched(x) if per_row else q_rhs_batched(x)
    return jnp.moveaxis(data, 0, axis), jnp.moveaxis(scale, 0, axis)


B = 3


# ---------------------------------------------------------------- dense

@pytest.mark.parametrize("n,per_row", [(256, False), (130, False), (130, True)])  # 130: scales spelled out per row
def test_dense_weights_batched_fold_into_n(n, per_row):
    m, k = 20, 200
    a = q_lhs(randn(1, (m, k)))
    b = _rhs(2, B, n, k, per_row)
    check(lambda a, b: dg.fp8_gemm_nt(a, b, out_dtype=F32), (None, (0, 0)), (a, b), B, ["fp8_gemm"])


@pytest.mark.parametrize("axis", [0, 1])
def test_dense_activations_batched_fold_into_m(axis):
    m, n, k = 20, 130, 200
    a = _lhs(3, B, m, k, axis)
    b = q_rhs(randn(4, (n, k)))
    check(dg.fp8_gemm_nt, ((axis, axis), None), (a, b), B, ["fp8_gemm"])


@pytest.mark.parametrize("per_row", [False, True])
def test_dense_both_batched_is_one_masked_call(per_row):
    m, n, k = 20, 130, 200
    a, b = _lhs(5, B, m, k, axis=1), _rhs(6, B, n, k, per_row)
    check(dg.fp8_gemm_nt, ((1, 1), (0, 0)), (a, b), B, ["m_grouped_masked"])


@pytest.mark.parametrize("axes,expect,out_dtype", [
    ((None, None, 0), ["fp8_gemm"], BF16),                 # only C: one product added to every C
    (((0, 0), None, 1), ["fp8_gemm"], F32),                # C folds into M with A
    (((0, 0), (0, 0), 0), ["m_grouped_masked"], BF16),     # C added to the masked call's float32 result
])
def test_dense_with_c(axes, expect, out_dtype):
    m, n, k = 12, 130, 200
    a_axes, b_axes, c_axis = axes
    a = _lhs(7, B, m, k) if a_axes is not None else q_lhs(randn(7, (m, k)))
    b = _rhs(8, B, n, k) if b_axes is not None else q_rhs(randn(8, (n, k)))
    c = randn(9, (B, m, n) if c_axis is not None else (m, n), BF16)
    c = jnp.moveaxis(c, 0, c_axis) if c_axis else c
    fn = lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=out_dtype)  # noqa: E731
    check(fn, (a_axes, b_axes, c_axis), (a, b, c), B, expect)


def test_dense_nested_vmap_and_other_layouts():
    m, n, k = 12, 130, 200
    a = _lhs(10, B, m, k)
    b = _rhs(11, 2, n, k)
    inner = jax.vmap(dg.fp8_gemm_nt, in_axes=((0, 0), None))  # over A
    outer = jax.vmap(inner, in_axes=(None, (0, 0)), out_axes=1)  # over B: [B, 2, M, N]
    assert_folded(outer, a, b, expect=["fp8_gemm"])
    expected = jnp.stack([jnp.stack([dg.fp8_gemm_nt((a[0][i], a[1][i]), (b[0][j], b[1][j])) for j in range(2)])
                          for i in range(B)])
    assert_same(jax.jit(outer)(a, b), expected)
    # NN layout: B stored [K, N], batched along its last axis
    b_kn = (jnp.moveaxis(jnp.swapaxes(b[0], 1, 2), 0, 2), b[1])
    check(dg.fp8_gemm_nn, (None, (2, 0)), ((a[0][0], a[1][0]), b_kn), 2, ["fp8_gemm"])


# ---------------------------------------------------------------- M-grouped contiguous

def _contiguous_ids(seed, b, m, g):
    """Per element: runs of 128 rows per expert (some -1 padding runs), the last run possibly partial."""
    rng = np.random.default_rng(seed)
    runs = -(-m // 128)
    ids = np.repeat(rng.integers(-1, g, size=(b, runs)), 128, axis=1)[:, :m]
    return jnp.asarray(ids, jnp.int32)


def test_contiguous_batched():
    m, g, n, k = 200, 3, 130, 128  # M=200: each element's runs are re-aligned to 128 rows when stacked
    a = _lhs(12, B, m, k)
    b_groups = _rhs(13, g, n, k)  # [G, N, K]: the weights of one call
    ids = _contiguous_ids(14, B, m, g)
    fn = lambda a, b, i: dg.m_grouped_fp8_gemm_nt_contiguous(a, b, i, out_dtype=F32)  # noqa: E731
    check(fn, ((0, 0), None, 0), (a, b_groups, ids), B, ["m_grouped_contiguous"])
    b_batched = tuple(jnp.stack([x] * 2) for x in b_groups)  # [2, G, N, K]
    b_batched = (b_batched[0], b_batched[1] * jnp.asarray([1.0, 0.5], F32)[:, None, None, None])
    check(fn, ((0, 0), (0, 0), 0), ((a[0][:2], a[1][:2]), b_batched, ids[:2]), 2, ["m_grouped_contiguous"])
    check(fn, (None, (0, 0), None), ((a[0][0], a[1][0]), b_batched, ids[0]), 2, ["m_grouped_contiguous"])
    check(fn, (None, None, 0), ((a[0][0], a[1][0]), b_groups, ids), B, ["m_grouped_contiguous"])


# ---------------------------------------------------------------- ragged

RAGGED_SIZES = np.asarray([[5, 0, 20, 3], [0, 0, 0, 40], [-3, 17, INT32_MAX, 1]], np.int32)  # includes bad data


@pytest.mark.parametrize("axes,expect", [
    (((0, 0), None, None), ["grouped_ragged"]),       # shared groups: rows regrouped across elements
    ((None, None, 0), ["grouped_ragged"]),            # only the group sizes
    ((None, (0, 0), None), ["grouped_ragged"]),       # only the weights: fold into N
    (((1, 1), (1, 1), 0), ["grouped_ragged"]),        # everything: B*G groups
])
def test_ragged_batched(axes, expect):
    m, g, n, k = 30, 4, 130, 200
    a_axes, b_axes, s_axis = axes
    a = _lhs(15, B, m, k, a_axes[0]) if a_axes else q_lhs(randn(15, (m, k)))
    b = _rhs(16, B * g, n, k) if b_axes else _rhs(16, g, n, k)
    if b_axes:
        b = tuple(jnp.moveaxis(x.reshape((B, g) + x.shape[1:]), 0, b_axes[0]) for x in b)
    sizes = jnp.asarray(RAGGED_SIZES if s_axis is not None else RAGGED_SIZES[0])
    fn = lambda a, b, s: dg.fp8_grouped_gemm_nt(a, b, s)  # noqa: E731
    check(fn, axes, (a, b, sizes), B, expect)


# ---------------------------------------------------------------- masked

@pytest.mark.parametrize("axes,expect", [
    (((0, 0), None, 0), ["grouped_ragged"]),           # shared weights: the valid rows as one ragged call
    ((None, None, 0), ["grouped_ragged"]),
    ((None, (0, 0), None), ["m_grouped_masked"]),      # only the weights: fold into N
    (((2, 2), (0, 0), None), ["m_grouped_masked"]),    # B*G groups
])
def test_masked_batched(axes, expect):
    g, m, n, k = 3, 24, 130, 200
    a_axes, b_axes, mm_axis = axes
    a = tuple(q_lhs_batched(randn(17, (B * g, m, k))))
    a = tuple(x.reshape((B, g) + x.shape[1:]) for x in a) if a_axes else tuple(x[:g] for x in a)
    if a_axes:
        a = tuple(jnp.moveaxis(x, 0, a_axes[0]) for x in a)
    b = _rhs(18, B * g, n, k)
    b = tuple(x.reshape((B, g) + x.shape[1:]) for x in b) if b_axes else tuple(x[:g] for x in b)
    masked = jnp.asarray([[0, 24, 7], [13, -2, 99], [1, 2, 3]], jnp.int32)
    masked = masked if mm_axis is not None else masked[0]
    fn = lambda a, b, mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, 8, out_dtype=F32)  # noqa: E731
    batched = jax.vmap(fn, in_axes=axes)
    assert_folded(batched, a, b, masked, expect=expect)
    got, expected = jax.jit(batched)(a, b, masked), looped(jax.jit(fn), axes, (a, b, masked), B)
    # only rows below each (clamped) masked_m are specified
    counts = np.clip(np.broadcast_to(np.asarray(masked), (B, g)), 0, m)
    rows = np.arange(m)[None, None, :] < counts[:, :, None]
    assert_same(got[rows], expected[rows])


# ---------------------------------------------------------------- k-grouped

@pytest.mark.parametrize("axes,expect", [
    (((0, 0), None, None, None), ["k_grouped"]),       # fold into M
    ((None, (1, 1), None, None), ["k_grouped"]),       # fold into N
    (((0, 0), (0, 0), None, None), ["k_grouped"]),     # elements end to end along K
    ((None, None, None, 0), ["k_grouped"]),            # only C
    (((0, 0), None, 0, 2), ["k_grouped"]),             # group sizes too: end to end along K, C added
])
def test_k_grouped_batched(axes, expect):
    m, n, k, g = 16, 24, 512, 3
    a_axes, b_axes, s_axis, c_axis = axes

    def operand(seed, rows, batched_axes):
        if batched_axes is None:
            return q_lhs(randn(seed, (rows, k)))
        return tuple(jnp.moveaxis(x, 0, batched_axes[0]) for x in q_lhs_batched(randn(seed, (B, rows, k))))

    a, b = operand(19, m, a_axes), operand(20, n, b_axes)
    sizes = np.asarray([[128, 0, 256], [384, 128, 0], [0, 0, 128]], np.int32)
    sizes = jnp.asarray(sizes if s_axis is not None else sizes[0])
    c = randn(21, (B, g, m, n) if c_axis is not None else (g, m, n))
    c = jnp.moveaxis(c, 0, c_axis) if c_axis else c
    fn = lambda a, b, s, c: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c)  # noqa: E731
    check(fn, axes, (a, b, sizes, c), B, expect)
    if c_axis is None:  # bf16 out (no C) through the same rules
        bf16 = lambda a, b, s: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, out_dtype=jnp.bfloat16)  # noqa: E731
        check(bf16, axes[:3], (a, b, sizes), B, expect)


# ---------------------------------------------------------------- gradients under vmap

def test_vmap_of_fp8_dot_grads():
    x, w = randn(22, (B, 8, 200)), randn(23, (B, 200, 130))
    r = randn(24, (8, 130))
    grad = jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w) * r), argnums=(0, 1))
    for in_axes, args in [((0, None), (x, w[0])), ((None, 0), (x[0], w)), ((0, 0), (x, w))]:
        batched = jax.vmap(grad, in_axes=in_axes)
        assert not [c for c in _calls(jax.make_jaxpr(batched)(*args).jaxpr) if c[1]]
        assert_same(jax.jit(batched)(*args), looped(jax.jit(grad), in_axes, args, B), rtol=1e-5)


def test_vmap_of_ragged_dot_grads():
    m, k, n = 20, 200, 9
    lhs, rhs = randn(25, (B, m, k)), randn(26, (B, 2, k, n))
    sizes = jnp.asarray([[12, 8], [0, 20], [5, -1]], jnp.int32)
    r = randn(27, (m, n))
    grad = jax.grad(lambda l, w, s: jnp.sum(dg.ragged_dot(l, w, s) * r), argnums=(0, 1))
    # shared groups (rows regrouped across elements) and per-element groups (B*G groups)
    for in_axes, args in [((0, None, None), (lhs, rhs[0], sizes[0])), ((0, 0, 0), (lhs, rhs, sizes))]:
        batched = jax.vmap(grad, in_axes=in_axes)
        assert not [c for c in _calls(jax.make_jaxpr(batched)(*args).jaxpr) if c[1]]
        assert_same(jax.jit(batched)(*args), looped(jax.jit(grad), in_axes, args, B), rtol=1e-5)


def test_nested_vmap_of_ragged_dot():
    m, k, n = 10, 200, 9
    lhs = randn(28, (2, 2, m, k))
    rhs = randn(29, (2, k, n))
    sizes = jnp.asarray([4, 6], jnp.int32)
    fn = jax.vmap(jax.vmap(dg.ragged_dot, in_axes=(0, None, None)), in_axes=(0, None, None))
    assert_folded(fn, lhs, rhs, sizes, expect=["grouped_ragged"])
    one = jax.jit(dg.ragged_dot)
    expected = jnp.stack([jnp.stack([one(lhs[i, j], rhs, sizes) for j in range(2)]) for i in range(2)])
    assert_same(jax.jit(fn)(lhs, rhs, sizes), expected, rtol=1e-5)


# ---------------------------------------------------------------- a batch of no element

def _gemm_cases():
    """(name, fn, element operands, in_axes) of every family; each element's result is [4, 130] or [2, 4, 130]."""
    a, b = q_lhs(randn(30, (4, 256))), q_rhs(randn(31, (130, 256)))
    ab = q_rhs_batched(randn(32, (2, 130, 256)))
    am = q_lhs_batched(randn(33, (2, 4, 256)))
    kb = q_lhs(randn(34, (130, 256)))
    ids, sizes = jnp.asarray([0, 1, 1, -1], jnp.int32), jnp.asarray([1, 3], jnp.int32)
    return [
        ("dense", dg.fp8_gemm_nt, (a, b)),
        ("contiguous", dg.m_grouped_fp8_gemm_nt_contiguous, (a, ab, ids)),
        ("ragged", dg.fp8_grouped_gemm_nt, (a, ab, sizes)),
        ("masked", lambda a, b, m: dg.m_grouped_fp8_gemm_nt_masked(a, b, m, 4), (am, ab, sizes)),
        ("k_grouped", dg.k_grouped_fp8_gemm_nt_contiguous, (a, kb, jnp.asarray([128, 128], jnp.int32))),
    ]


@pytest.mark.parametrize("case", range(5), ids=[c[0] for c in _gemm_cases()])
def test_a_batch_of_no_element_gives_an_empty_result(case):
    """vmap over a batch axis of size 0 (the rules fold the batch: nothing to fold) gives [0, each element's
    result], for every family, every operand batched or the first alone, and the layers' gradients too."""
    name, fn, element = _gemm_cases()[case]
    want = jax.eval_shape(fn, *element)
    none = jax.tree.map(lambda x: jnp.zeros((0,) + x.shape, x.dtype), element)
    first_only = (none[0],) + element[1:]
    for args, in_axes in ((none, 0), (first_only, (0,) + (None,) * (len(element) - 1))):
        got = jax.jit(jax.vmap(fn, in_axes=in_axes))(*args)
        assert got.shape == (0,) + want.shape and got.dtype == want.dtype, name


def test_a_batch_of_no_element_through_the_layers():
    from jax_deepgemm import nn

    x, w = jnp.zeros((0, 4, 256), BF16), randn(35, (256, 130))
    gx, gw = jax.vmap(jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w).astype(F32)), argnums=(0, 1)),
                      in_axes=(0, None))(x, w)
    assert gx.shape == x.shape and gw.shape == (0,) + w.shape
    moe = lambda x: nn.moe(x, randn(36, (256, 4)), randn(37, (4, 256, 256)), randn(38, (4, 128, 256)), top_k=2)  # noqa
    assert jax.vmap(moe)(x).shape == x.shape
