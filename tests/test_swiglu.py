"""swiglu_fp8 and swiglu_backward: the weighted SwiGLU and its gradients, each with the per-token FP8 quantization of
its result in one pass, against a float64 NumPy oracle of their formulas; their FP8 results are per_token_cast_to_fp8
of their own h and dx bit for bit. dispatched_swiglu: the MoE layer's first GEMM with the SwiGLU, whose values and
gradients equal the two steps apart (autodiff of dispatched_ragged_dot then the SwiGLU); moe_ffn: that step and
combined_ragged_dot in one, equal to the two. On CPU this checks the reference lowering; with an sm_90 GPU the bfloat16
cases with F % 128 == 0 run the kernels (checked present in the program; the others checked to take the reference),
outputs poisoned before each launch, also inside a jitted lax.scan."""

from __future__ import annotations

import os
import re

os.environ["DG_POISON_OUTPUTS"] = "1"  # read when XLA compiles each program below: set before the first compile

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from conftest import BF16, F32, cosine, kernels_active, randn, seed_of  # noqa: E402

import jax_deepgemm as dg  # noqa: E402
from jax_deepgemm.differentiable import (combined_ragged_dot, dispatched_ragged_dot, dispatched_swiglu,  # noqa: E402
                                         moe_ffn)
from jax_deepgemm.swiglu import swiglu, swiglu_backward, swiglu_fp8  # noqa: E402

_KERNEL = re.compile(r"swiglu_backward\s*=\s*true")  # the quantization kernel's call in its SwiGLU modes
_FORWARD_KERNEL = re.compile(r"swiglu_forward\s*=\s*true")


def _backward(x, dh, w):
    """swiglu_backward under jit; on the GPU also checks that the kernel runs where it applies and only there."""
    fn = jax.jit(swiglu_backward)
    if kernels_active():
        takes = x.dtype == BF16 and x.shape[1] % 256 == 0 and x.shape[0] > 0
        assert bool(_KERNEL.search(fn.lower(x, dh, w).compile().as_text())) == takes
    return fn(x, dh, w)


def _oracle(x, dh, w):
    """The formulas in float64: (dx before its rounding, dw), each with the sum of its terms' magnitudes (what float32
    steps can lose to cancellation is a multiple of 2^-24 of that)."""
    x, dh, w = (np.asarray(a, np.float64) for a in (x, dh, w))
    f = x.shape[1] // 2
    g, u = x[:, :f], x[:, f:]
    s = 1.0 / (1.0 + np.exp(-g))
    dhw = dh * w[:, None]
    dx = np.concatenate([dhw * u * s * (1.0 + g * (1.0 - s)), dhw * g * s], axis=1)
    dx_size = np.concatenate([np.abs(dhw * u * s) * (1.0 + np.abs(g) * (1.0 - s)), np.abs(dhw * g * s)], axis=1)
    return dx, dx_size, np.sum(dh * g * s * u, axis=1), np.sum(np.abs(dh * g * s * u), axis=1)


def _operands(rows, f, dtype, tag):
    x = randn(seed_of("swiglu", tag, "x"), (rows, 2 * f), dtype) * 2.0
    dh = randn(seed_of("swiglu", tag, "dh"), (rows, f), dtype)
    w = jax.random.uniform(jax.random.key(seed_of("swiglu", tag, "w")), (rows,), F32, 0.05, 1.0)
    return x, dh, w


def _check(x, dh, w, got):
    dx, (data, scale), dw = got
    want_dx, dx_size, want_dw, dw_size = _oracle(x, dh, w)
    assert dx.dtype == x.dtype and dx.shape == x.shape and dw.dtype == F32 and dw.shape == (x.shape[0],)
    # dx: the float32 formulas (a few roundings each, the kernel's exponential within a few units), rounded once to
    # x.dtype: at most one unit in its last place besides; float32 flushes what falls below its normal range
    ulp = 2.0 ** -7 if x.dtype == BF16 else 2.0 ** -23
    err = np.abs(np.asarray(dx, np.float64) - want_dx)
    bad = err > ulp * np.abs(want_dx) + 2.0 ** -18 * dx_size + 2.0 ** -110
    assert not bad.any(), (np.argwhere(bad)[:5], err[bad][:5], want_dx[bad][:5])
    # dw: a float32 sum of F such terms, in some order
    f = x.shape[1] // 2
    err = np.abs(np.asarray(dw, np.float64) - want_dw)
    assert (err <= (f + 64) * 2.0 ** -24 * dw_size + 2.0 ** -110).all(), (err, dw_size)
    _assert_helper_bits(dx, data, scale)


def _assert_helper_bits(value, data, scale, rows=slice(None)):
    """The FP8 operand (of `rows`) is the helper's quantization of the value as returned, bit for bit (the helper run
    where the kernel ran, on the whole value: XLA's CPU max over a block holding a NaN depends on its vectorization)."""
    want_data, want_scale = jax.jit(dg.per_token_cast_to_fp8)(value)
    np.testing.assert_array_equal(np.asarray(scale[rows]).view(np.uint32), np.asarray(want_scale[rows]).view(np.uint32))
    np.testing.assert_array_equal(np.asarray(data[rows].view(jnp.uint8)), np.asarray(want_data[rows].view(jnp.uint8)))


# (rows, F): kernel shapes (F % 128 == 0) with full, partial and single 8-row CTAs, and reference shapes
_SHAPES = [(256, 128), (300, 256), (1, 128), (13, 384), (64, 2048), (40, 96), (7, 4)]


@pytest.mark.parametrize("dtype", [BF16, F32], ids=["bf16", "f32"])
@pytest.mark.parametrize("rows,f", _SHAPES)
def test_against_the_oracle(rows, f, dtype):
    x, dh, w = _operands(rows, f, dtype, (rows, f, str(dtype)))
    _check(x, dh, w, _backward(x, dh, w))


def test_extreme_gates_and_non_finite_values():
    """Large |g| (sigmoid saturates), zeros, and a NaN and an infinity in one row each: those rows' amax is NaN / inf
    as the helper's; the other rows are untouched by them."""
    x, dh, w = _operands(24, 256, BF16, "extreme")
    x = x.at[0, :256].set(jnp.linspace(-120.0, 120.0, 256).astype(BF16))
    x = x.at[1].set(0.0)
    x = x.at[2, 5].set(jnp.nan).at[3, 300].set(jnp.inf)
    dx, (data, scale), dw = _backward(x, dh, w)
    clean = np.r_[0:2, 4:24]
    _check(x[clean], dh[clean], w[clean], (dx[clean], (data[clean], scale[clean]), dw[clean]))
    assert np.isnan(np.asarray(dw[2])) and not np.isfinite(np.asarray(dw[3]))
    _assert_helper_bits(dx, data, scale, rows=slice(2, 4))


def test_empty():
    x, dh, w = jnp.zeros((0, 256), BF16), jnp.zeros((0, 128), BF16), jnp.zeros((0,), F32)
    dx, (data, scale), dw = _backward(x, dh, w)
    assert dx.shape == (0, 256) and data.shape == (0, 256) and scale.shape == (0, 2) and dw.shape == (0,)


def test_vmap_is_rows():
    x, dh, w = _operands(3 * 40, 128, BF16, "vmap")
    batched = jax.jit(jax.vmap(swiglu_backward))(x.reshape(3, 40, 256), dh.reshape(3, 40, 128), w.reshape(3, 40))
    flat = _backward(x, dh, w)
    for got, want in zip(jax.tree.leaves(batched), jax.tree.leaves(flat)):
        np.testing.assert_array_equal(np.asarray(got.reshape(want.shape), np.float64), np.asarray(want, np.float64))
    # one operand unbatched: broadcast
    got = jax.jit(jax.vmap(swiglu_backward, in_axes=(0, 0, None)))(x.reshape(3, 40, 256), dh.reshape(3, 40, 128),
                                                                    w[:40])
    want = jax.vmap(lambda a, b: swiglu_backward(a, b, w[:40]))(x.reshape(3, 40, 256), dh.reshape(3, 40, 128))
    for g, e in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_array_equal(np.asarray(g, np.float64), np.asarray(e, np.float64))


def test_inside_a_jitted_scan():
    """The kernel as a step of lax.scan under jit (on the GPU: a command buffer), each step its own operands."""
    x, dh, w = _operands(4 * 64, 256, BF16, "scan")
    xs = (x.reshape(4, 64, 512), dh.reshape(4, 64, 256), w.reshape(4, 64))

    def step(carry, operands):
        dx, (data, scale), dw = swiglu_backward(*operands)
        return carry + jnp.sum(dw), (dx, data, scale, dw)

    _, (dx, data, scale, dw) = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs))(xs)
    for i in range(4):
        _check(xs[0][i], xs[1][i], xs[2][i], (dx[i], (data[i], scale[i]), dw[i]))


@pytest.mark.parametrize("args,match", [
    (((8, 255), (8, 127), (8,)), r"x must be \[rows, 2F\]"),
    (((8, 256), (8, 127), (8,)), r"dh must be \[rows, F\] = \[8, 128\]"),
    (((8, 256), (8, 128), (7,)), r"w must be \[rows\] = \[8\]"),
    (((256,), (128,), (1,)), r"x must be \[rows, 2F\]"),
])
def test_bad_shapes(args, match):
    x, dh, w = (jnp.ones(s, BF16) for s in args)
    with pytest.raises(ValueError, match=match):
        swiglu_backward(x, dh, w)


def test_bad_dtype():
    with pytest.raises(TypeError, match="dh must be a floating array"):
        swiglu_backward(jnp.ones((8, 256), BF16), jnp.ones((8, 128), jnp.int32), jnp.ones(8))


# ---- swiglu_fp8: h and its per-token quantization ----

def _forward(x, w):
    """swiglu_fp8 under jit; on the GPU also checks that the kernel runs where it applies and only there."""
    fn = jax.jit(swiglu_fp8)
    if kernels_active():
        takes = x.dtype == BF16 and x.shape[1] % 256 == 0 and x.shape[0] > 0
        assert bool(_FORWARD_KERNEL.search(fn.lower(x, w).compile().as_text())) == takes
    return fn(x, w)


def _check_forward(x, w, got):
    h, (data, scale) = got
    xd, wd = np.asarray(x, np.float64), np.asarray(w, np.float64)
    f = x.shape[1] // 2
    g, u = xd[:, :f], xd[:, f:]
    want = g / (1.0 + np.exp(-g)) * u * wd[:, None]
    assert h.dtype == x.dtype and h.shape == (x.shape[0], f)
    # a product of float32 factors (the kernel's exponential within a few units), rounded once to x.dtype
    ulp = 2.0 ** -7 if x.dtype == BF16 else 2.0 ** -23
    err = np.abs(np.asarray(h, np.float64) - want)
    bad = err > (ulp + 2.0 ** -18) * np.abs(want) + 2.0 ** -110
    assert not bad.any(), (np.argwhere(bad)[:5], err[bad][:5], want[bad][:5])
    _assert_helper_bits(h, data, scale)


@pytest.mark.parametrize("dtype", [BF16, F32], ids=["bf16", "f32"])
@pytest.mark.parametrize("rows,f", _SHAPES)
def test_forward_against_the_oracle(rows, f, dtype):
    x, _, w = _operands(rows, f, dtype, ("forward", rows, f, str(dtype)))
    _check_forward(x, w, _forward(x, w))


def test_forward_extreme_gates_and_non_finite_values():
    """Large |g|, zeros, and a NaN and an infinity in one row each: those rows' h and scales are the helper's of h."""
    x, _, w = _operands(24, 256, BF16, "forward-extreme")
    x = x.at[0, :256].set(jnp.linspace(-120.0, 120.0, 256).astype(BF16))
    x = x.at[1].set(0.0)
    x = x.at[2, 5].set(jnp.nan).at[3, 300].set(jnp.inf)
    h, (data, scale) = _forward(x, w)
    clean = np.r_[0:2, 4:24]
    _check_forward(x[clean], w[clean], (h[clean], (data[clean], scale[clean])))
    assert np.isnan(np.asarray(h[2, 5], np.float32))
    assert not np.isfinite(np.asarray(h[3, 300 - 256], np.float32))
    _assert_helper_bits(h, data, scale, rows=slice(2, 4))


def test_forward_empty_vmap_and_scan():
    h, (data, scale) = _forward(jnp.zeros((0, 256), BF16), jnp.zeros((0,), F32))
    assert h.shape == (0, 128) and data.shape == (0, 128) and scale.shape == (0, 1)
    x, _, w = _operands(3 * 40, 128, BF16, "forward-vmap")
    batched = jax.jit(jax.vmap(swiglu_fp8))(x.reshape(3, 40, 256), w.reshape(3, 40))
    for got, want in zip(jax.tree.leaves(batched), jax.tree.leaves(_forward(x, w))):
        np.testing.assert_array_equal(np.asarray(got.reshape(want.shape), np.float64), np.asarray(want, np.float64))

    def step(carry, operands):  # (on the GPU: a command buffer)
        h, (data, scale) = swiglu_fp8(*operands)
        return carry + jnp.sum(scale), (h, data, scale)

    _, (h, data, scale) = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs))((x.reshape(3, 40, 256), w.reshape(3, 40)))
    for i in range(3):
        _check_forward(x[40 * i:40 * (i + 1)], w[40 * i:40 * (i + 1)], (h[i], (data[i], scale[i])))


@pytest.mark.parametrize("args,match", [
    (((8, 255), (8,)), r"x must be \[rows, 2F\]"),
    (((8, 256), (7,)), r"w must be \[rows\] = \[8\]"),
])
def test_forward_bad_shapes(args, match):
    x, w = (jnp.ones(s, BF16) for s in args)
    with pytest.raises(ValueError, match=match):
        swiglu_fp8(x, w)
    with pytest.raises(TypeError, match="w must be a floating array"):
        swiglu_fp8(jnp.ones((8, 256), BF16), jnp.ones(8, jnp.int32))


# ---- dispatched_swiglu: the MoE layer's first GEMM and SwiGLU as one differentiable step ----

def _moe_operands(dtype, f):
    t, top_k, g, k = 96, 2, 4, 256
    x = randn(seed_of("dswiglu", "x", f), (t, k), dtype)
    rhs = randn(seed_of("dswiglu", "rhs", f), (g, k, 2 * f), spread=False) * 0.06
    order = jax.random.permutation(jax.random.key(seed_of("dswiglu", "order", f)), t * top_k).astype(jnp.int32)
    sizes = jnp.asarray([50, 0, 90, 52], jnp.int32)
    w = jax.random.uniform(jax.random.key(seed_of("dswiglu", "w", f)), (t * top_k,), F32, 0.1, 1.0)
    return x, order, top_k, rhs, sizes, w


def _two_steps(x, order, top_k, rhs, sizes, w):
    return swiglu(dispatched_ragged_dot(x, order, top_k, rhs, sizes), w, x.dtype)


@pytest.mark.parametrize("dtype,f", [(BF16, 128), (F32, 128), (BF16, 96)], ids=["bf16", "f32", "bf16-F96"])
def test_dispatched_swiglu_equals_the_two_steps(dtype, f):
    x, order, top_k, rhs, sizes, w = _moe_operands(dtype, f)
    cot = randn(seed_of("dswiglu", "cot", f), (order.shape[0], f), F32)

    def loss(step):
        return lambda x, rhs, w: jnp.sum(step(x, order, top_k, rhs, sizes, w).astype(F32) * cot)

    got = jax.jit(jax.value_and_grad(loss(dispatched_swiglu), argnums=(0, 1, 2)))(x, rhs, w)
    want = jax.jit(jax.value_and_grad(loss(_two_steps), argnums=(0, 1, 2)))(x, rhs, w)
    np.testing.assert_allclose(float(got[0]), float(want[0]), rtol=1e-5)
    for name, g, e in zip(("x", "rhs", "row_weights"), got[1], want[1]):
        assert g.dtype == e.dtype and g.shape == e.shape, name
        # the same FP8 GEMMs; the SwiGLU's gradient formed by other float32 steps, which can flip a bf16 rounding
        # and so an FP8 one of an element of the dgrad's operand
        assert cosine(g, e) > 0.9999, (name, cosine(g, e))
    if kernels_active() and dtype == BF16 and f % 128 == 0:
        text = jax.jit(jax.grad(loss(dispatched_swiglu), argnums=(0, 1, 2))).lower(x, rhs, w).compile().as_text()
        assert _KERNEL.search(text)


def test_dispatched_swiglu_bad_row_weights():
    x, order, top_k, rhs, sizes, w = _moe_operands(F32, 128)
    with pytest.raises(ValueError, match="row_weights"):
        dispatched_swiglu(x, order, top_k, rhs, sizes, w[:-1])
    with pytest.raises(ValueError, match="odd"):
        dispatched_swiglu(x, order, top_k, rhs[..., :-1], sizes, w)


# ---- moe_ffn: dispatched_swiglu and combined_ragged_dot as one differentiable step ----

def _moe_ffn_operands(dtype, f):
    x, order, top_k, rhs, sizes, w = _moe_operands(dtype, f)
    w_down = randn(seed_of("moe_ffn", "w_down", f), (rhs.shape[0], f, 192), spread=False) * 0.1
    return x, order, top_k, rhs, w_down, sizes, w


def _moe_ffn_two_steps(x, order, top_k, w_gate_up, w_down, sizes, w):
    return combined_ragged_dot(dispatched_swiglu(x, order, top_k, w_gate_up, sizes, w), order, top_k, w_down, sizes)


@pytest.mark.parametrize("argnums", [(0, 1, 2, 3), (2,), (0,)], ids=["all", "w_down", "x"])
@pytest.mark.parametrize("dtype,f", [(BF16, 128), (F32, 128), (BF16, 96)], ids=["bf16", "f32", "bf16-F96"])
def test_moe_ffn_equals_the_two_steps(dtype, f, argnums):
    x, order, top_k, w_gate_up, w_down, sizes, w = _moe_ffn_operands(dtype, f)
    cot = randn(seed_of("moe_ffn", "cot", f), (x.shape[0], w_down.shape[2]), F32)

    def loss(step):
        return lambda x, w_gate_up, w_down, w: jnp.sum(
            step(x, order, top_k, w_gate_up, w_down, sizes, w).astype(F32) * cot)

    got = jax.jit(jax.value_and_grad(loss(moe_ffn), argnums=argnums))(x, w_gate_up, w_down, w)
    want = jax.jit(jax.value_and_grad(loss(_moe_ffn_two_steps), argnums=argnums))(x, w_gate_up, w_down, w)
    # the same GEMMs; h formed by the SwiGLU's kernel (its fast exponential) where it runs, else by the same XLA ops
    np.testing.assert_allclose(float(got[0]), float(want[0]), rtol=1e-5)
    names = ("x", "w_gate_up", "w_down", "row_weights")
    for i, g, e in zip(argnums, got[1], want[1]):
        assert g.dtype == e.dtype and g.shape == e.shape, names[i]
        assert cosine(g, e) > 0.9999, (names[i], cosine(g, e))
    if kernels_active() and dtype == BF16 and f % 128 == 0:
        text = jax.jit(jax.grad(loss(moe_ffn), argnums=argnums)).lower(x, w_gate_up, w_down, w).compile().as_text()
        # (a gradient's program computes no loss value: h, and with it the SwiGLU's forward kernel, is needed only for
        # w_down's gradient; the SwiGLU's backward only where something before h is differentiated)
        assert bool(_FORWARD_KERNEL.search(text)) == (2 in argnums)
        assert bool(_KERNEL.search(text)) == (argnums != (2,))


def test_moe_ffn_without_kernels_is_the_two_steps_bit_for_bit():
    """Where the SwiGLU's kernel does not run (F % 128 != 0) the one step is the two steps' ops: the same bits."""
    x, order, top_k, w_gate_up, w_down, sizes, w = _moe_ffn_operands(BF16, 96)
    got = jax.jit(moe_ffn, static_argnums=2)(x, order, top_k, w_gate_up, w_down, sizes, w)
    want = jax.jit(_moe_ffn_two_steps, static_argnums=2)(x, order, top_k, w_gate_up, w_down, sizes, w)
    np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))


def test_moe_ffn_bad_w_down():
    x, order, top_k, w_gate_up, w_down, sizes, w = _moe_ffn_operands(F32, 128)
    with pytest.raises(ValueError, match=r"w_down has shape \(4, 64, 192\); expected \[G, F, N\] with G = 4 and "
                                         r"F = 128"):
        moe_ffn(x, order, top_k, w_gate_up, w_down[:, :64], sizes, w)
    with pytest.raises(ValueError, match=r"w_gate_up .* \(odd\)"):
        moe_ffn(x, order, top_k, w_gate_up[..., :-1], w_down, sizes, w)
    with pytest.raises(ValueError, match="w_down must be"):
        moe_ffn(x, order, top_k, w_gate_up, w_down[0], sizes, w)
