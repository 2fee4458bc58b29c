"""jax_deepgemm.nn's functional layers on one device: fp8_linear and moe against float64 NumPy oracles (forward)
and against the same layers in float32 (gradients), and their argument checks."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax_deepgemm import nn
from jax_deepgemm.nn import experts
import nn_common
from conftest import to64
from nn_common import assert_close_in_direction, grads, moe_oracle

T, E, TOP_K = 96, 8, 2
D, F = nn_common.D, nn_common.F


def random_moe(seed: int, tokens: int = T, experts: int = E, dtype=jnp.float32):
    return nn_common.random_moe(seed, tokens, experts, dtype)


# ---------------------------------------------------------------- fp8_linear

def test_fp8_linear_matches_float32_forward_and_grads():
    kx, kw, kb, kp = jax.random.split(jax.random.key(1), 4)
    x = jax.random.normal(kx, (3, 40, 320), jnp.float32)  # leading dims, K not a multiple of 128
    w = jax.random.normal(kw, (320, 192), jnp.float32) / np.sqrt(320)
    b = jax.random.normal(kb, (192,), jnp.float32)
    probe = jax.random.normal(kp, (3, 40, 192), jnp.float32)
    y = jax.jit(nn.fp8_linear)(x, w, b)
    assert y.shape == (3, 40, 192) and y.dtype == jnp.float32
    assert_close_in_direction(y, to64(x) @ to64(w) + to64(b), "fp8_linear output")
    with jax.default_matmul_precision("highest"):
        want = grads(lambda x, w, b: x @ w + b, (x, w, b), probe)
    got = grads(nn.fp8_linear, (x, w, b), probe)
    for name, g, gw in zip(("x", "w", "b"), got, want):
        assert g.shape == gw.shape and g.dtype == gw.dtype, name
        assert_close_in_direction(g, gw, f"grad {name}")


def test_fp8_linear_without_bias_keeps_bf16():
    x = jax.random.normal(jax.random.key(2), (16, 128), jnp.bfloat16)
    w = jax.random.normal(jax.random.key(3), (128, 64), jnp.float32)
    y = nn.fp8_linear(x, w)
    assert y.dtype == jnp.bfloat16 and y.shape == (16, 64)
    assert_close_in_direction(y, to64(x) @ to64(w), "fp8_linear bf16 output")


@pytest.mark.parametrize("x_shape, w_shape, b_shape, error, match", [
    ((8, 64), (32, 16), None, ValueError, r"fp8_linear: w has shape \(32, 16\); expected \[64, N\]"),
    ((8, 64), (64, 16), (8,), ValueError, r"fp8_linear: b has shape \(8,\); expected \[16\]"),
    ((8, 64), (64,), None, ValueError, r"fp8_linear: w has shape \(64,\); expected \[64, N\]"),
])
def test_fp8_linear_rejects_bad_shapes(x_shape, w_shape, b_shape, error, match):
    b = None if b_shape is None else jnp.ones(b_shape)
    with pytest.raises(error, match=match):
        jax.jit(nn.fp8_linear).trace(jnp.ones(x_shape), jnp.ones(w_shape), b)


@pytest.mark.parametrize("x_shape, w_shape", [((0, 64), (64, 16)), ((2, 0, 64), (64, 16)), ((3, 0), (0, 16))])
def test_fp8_linear_empty_dimensions_give_what_x_at_w_plus_b_gives(x_shape, w_shape):
    x, w = jnp.ones(x_shape, jnp.bfloat16), jnp.ones(w_shape)
    b = jnp.arange(w_shape[1], dtype=jnp.float32)
    exact = lambda x, w, b: jnp.matmul(x, w.astype(x.dtype)) + b.astype(x.dtype)  # noqa: E731
    got, want = jax.jit(nn.fp8_linear)(x, w, b), exact(x, w, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(to64(got), to64(want))
    loss = lambda f: lambda *a: jnp.sum(f(*a).astype(jnp.float32))  # noqa: E731
    for g, e in zip(jax.grad(loss(nn.fp8_linear), argnums=(0, 1, 2))(x, w, b),
                    jax.grad(loss(exact), argnums=(0, 1, 2))(x, w, b)):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_array_equal(to64(g), to64(e))


def test_fp8_linear_rejects_integer_input():
    with pytest.raises(TypeError, match=r"fp8_linear: x must be float32/bfloat16/float16, got int32"):
        nn.fp8_linear(jnp.ones((4, 8), jnp.int32), jnp.ones((8, 4)))


# ---------------------------------------------------------------- moe

def test_moe_float_path_equals_dense_oracle():
    """fp8=False is the exact layer: routing, dispatch by expert, SwiGLU and the weighted combine, checked against
    every expert applied to every token in float64."""
    args = random_moe(4)
    with jax.default_matmul_precision("highest"):
        y = jax.jit(lambda *a: nn.moe(*a, top_k=TOP_K, fp8=False))(*args)
    want = moe_oracle(*args, TOP_K)
    np.testing.assert_allclose(to64(y), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("top_k", [1, 3])
def test_moe_fp8_forward_matches_oracle(top_k):
    args = random_moe(5 + top_k)
    y = jax.jit(lambda *a: nn.moe(*a, top_k=top_k))(*args)
    assert y.shape == (T, D) and y.dtype == jnp.float32
    assert_close_in_direction(y, moe_oracle(*args, top_k), f"moe output, top_k={top_k}")


def test_moe_fp8_grads_match_float32_layer():
    args = random_moe(6)
    probe = jax.random.normal(jax.random.key(7), (T, D), jnp.float32)
    got = grads(lambda *a: nn.moe(*a, top_k=TOP_K), args, probe)
    with jax.default_matmul_precision("highest"):
        want = grads(lambda *a: nn.moe(*a, top_k=TOP_K, fp8=False), args, probe)
    for name, g, gw in zip(("x", "router_w", "w_gate_up", "w_down"), got, want):
        assert g.shape == gw.shape and g.dtype == gw.dtype, name
        assert_close_in_direction(g, gw, f"grad {name}")


def test_moe_bf16_tokens_and_leading_dims():
    x, router_w, w_gate_up, w_down = random_moe(8, dtype=jnp.bfloat16)
    x3 = x.reshape(4, T // 4, D)
    y = jax.jit(lambda *a: nn.moe(*a, top_k=TOP_K))(x3, router_w, w_gate_up, w_down)
    assert y.shape == (4, T // 4, D) and y.dtype == jnp.bfloat16
    assert_close_in_direction(y.reshape(T, D), moe_oracle(x, router_w, w_gate_up, w_down, TOP_K), "bf16 moe")


def test_route_weights_are_renormalised_top_k():
    x, router_w, _, _ = random_moe(9)
    weights, ids = nn.route(x, router_w, 3)
    assert weights.shape == ids.shape == (T, 3) and ids.dtype == jnp.int32
    np.testing.assert_allclose(np.asarray(weights).sum(-1), 1, rtol=1e-6)
    probs = np.asarray(jax.nn.softmax(x @ router_w, axis=-1))
    np.testing.assert_array_equal(np.sort(np.asarray(ids), -1), np.sort(np.argsort(-probs, -1)[:, :3], -1))


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.bfloat16])
def test_route_weights_and_gradients_are_float32_accurate(dtype):
    """route's weights and the gradients of a loss of them against float64 NumPy, at float32's accuracy. A bf16
    router product misses them (on the CPU it flips 2 of these 96 tokens' expert choices, and the other weights
    are off by up to 5.7e-3 against rtol 1e-5); TF32's 10-bit mantissa would too, by its precision (not run).
    rtol 1e-5 is float32's own bound here: logits up to ~17, each a sum of D = 256 products, come out up to ~4e-6
    off the float64 ones (3.8e-6 on an AMD EPYC CPU), by summation order, and a weight's relative error is up to two
    logits' errors (4.4e-6 there, past the former rtol 2e-6)."""
    x, router_w, _, _ = random_moe(21, dtype=dtype)
    router_w = router_w * 4  # logits of a few units: softmax probabilities far from uniform
    c = np.asarray(jax.random.normal(jax.random.key(22), (T, TOP_K), jnp.float32), np.float64)
    loss = lambda w, x: jnp.sum(nn.route(x, w, TOP_K)[0] * jnp.asarray(c, jnp.float32))  # noqa: E731
    (weights, ids), (d_w, d_x) = jax.jit(nn.route, static_argnums=2)(x, router_w, TOP_K), \
        jax.jit(jax.grad(loss, argnums=(0, 1)))(router_w, x)
    want_weights, want_ids = nn_common.route_oracle(x, router_w, TOP_K)
    np.testing.assert_array_equal(np.asarray(ids), want_ids)
    np.testing.assert_allclose(to64(weights), want_weights, rtol=1e-5, atol=1e-7)
    # The loss's gradient in float64: weights w_j = p_j / s over the chosen experts (s their sum), p = softmax(logits).
    x64, w64 = to64(x), to64(router_w)
    logits = x64 @ w64
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    chosen = np.take_along_axis(p, want_ids, -1)
    s = chosen.sum(-1, keepdims=True)
    d_p = np.zeros_like(p)  # d loss / d p: (c_j - loss of the token) / s on the chosen experts
    np.put_along_axis(d_p, want_ids, (c - (c * chosen / s).sum(-1, keepdims=True)) / s, -1)
    d_logits = p * (d_p - (d_p * p).sum(-1, keepdims=True))
    for name, got, want, rtol in (("router_w", d_w, x64.T @ d_logits, 1e-5),
                                  ("x", d_x, d_logits @ w64.T, 1e-5 if dtype == jnp.float32 else 1e-2)):
        assert got.dtype == (jnp.float32 if name == "router_w" else dtype), name
        np.testing.assert_allclose(to64(got), want, rtol=rtol, atol=rtol * np.abs(want).max(), err_msg=name)


@pytest.mark.parametrize("n,num_experts", [(16384, 16), (0, 4), (1, 4), (127, 3), (128, 3), (129, 3), (1000, 256),
                                           (300, 1), (65536, 32), (65536, 33)])
def test_sort_by_expert_is_a_stable_sort_by_expert(n, num_experts):
    """The dispatch's sort against NumPy's stable argsort of the ids, ids outside [0, num_experts) (negative, one past,
    far past) sorting last in their order and counted in no group; under jit; the counting sort's blocks of 128
    entries full, partial and one; its limit (65536 * (32 + 224) = 2^24) and just past it (the argsort)."""
    rng = np.random.default_rng(n + num_experts)
    for ids in (rng.integers(0, num_experts, n), rng.integers(-3, num_experts + 4, n),
                np.where(rng.random(n) < 0.5, 2**31 - 1, rng.integers(0, num_experts, n))):
        ids = ids.astype(np.int32)
        order, sizes = jax.jit(experts.sort_by_expert, static_argnums=1)(jnp.asarray(ids), num_experts)
        inside = (ids >= 0) & (ids < num_experts)
        assert order.dtype == sizes.dtype == jnp.int32 and order.shape == (n,) and sizes.shape == (num_experts,)
        np.testing.assert_array_equal(np.asarray(order), np.argsort(np.where(inside, ids, num_experts), kind="stable"))
        np.testing.assert_array_equal(np.asarray(sizes), np.bincount(ids[inside], minlength=num_experts))


def test_expert_ffn_combine_is_the_weighted_sum_of_each_tokens_rows():
    """combine=weights scales the SwiGLU activations before the down projection: the same sum as weighting the FFN's
    rows after it, in float32 at full precision; the FP8 path close to it in direction."""
    x, router_w, w_gate_up, w_down = random_moe(13)
    weights, ids = nn.route(x, router_w, TOP_K)
    order, sizes = experts.sort_by_expert(ids.reshape(-1), E)
    with jax.default_matmul_precision("highest"):
        rows = nn.expert_ffn(x, w_gate_up, w_down, sizes, fp8=False, gather=(order, TOP_K))
        got = nn.expert_ffn(x, w_gate_up, w_down, sizes, fp8=False, gather=(order, TOP_K), combine=weights)
        fp8 = nn.expert_ffn(x, w_gate_up, w_down, sizes, gather=(order, TOP_K), combine=weights)
    per_pair = np.zeros(rows.shape)
    per_pair[np.asarray(order)] = to64(rows)
    want = (per_pair.reshape(T, TOP_K, D) * to64(weights)[..., None]).sum(axis=1)
    assert got.shape == fp8.shape == (T, D)
    np.testing.assert_allclose(to64(got), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    assert_close_in_direction(fp8, want, "FP8 expert_ffn with combine")
    with pytest.raises(ValueError, match=r"expert_ffn: combine needs gather=\(order, top_k\)"):
        nn.expert_ffn(x, w_gate_up, w_down, sizes, combine=weights)
    with pytest.raises(ValueError, match=r"expert_ffn: combine must be the weights \[T, top_k\] = \[96, 2\] .* got "
                                         r"shape \(96, 1\)"):
        nn.expert_ffn(x, w_gate_up, w_down, sizes, gather=(order, TOP_K), combine=weights[:, :1])


GOOD = {"x": (T, D), "router_w": (D, E), "w_gate_up": (E, D, 2 * F), "w_down": (E, F, D)}


@pytest.mark.parametrize("fp8", [True, False])
def test_moe_without_tokens_gives_an_empty_result_and_zero_weight_gradients(fp8):
    operands = [jnp.ones((0, D), jnp.bfloat16)] + [jnp.ones(v) for k, v in GOOD.items() if k != "x"]
    y = jax.jit(lambda *a: nn.moe(*a, top_k=2, fp8=fp8))(*operands)
    assert y.shape == (0, D) and y.dtype == jnp.bfloat16
    grads = jax.grad(lambda *a: jnp.sum(nn.moe(*a, top_k=2, fp8=fp8).astype(jnp.float32)), argnums=(0, 1, 2, 3))(
        *operands)
    for g, a in zip(grads, operands):
        assert g.shape == a.shape and not np.any(to64(g))


@pytest.mark.parametrize("name, shape, match", [
    ("router_w", (D + 1, E), r"moe: router_w has shape \(257, 8\); expected \[256, E\]"),
    ("w_gate_up", (E - 1, D, 2 * F), r"moe: w_gate_up has shape \(7, 256, 256\); expected \[8, 256, 2F\] \(\[E, D, 2F\]"),
    ("w_gate_up", (E, D, 2 * F + 1), r"moe: w_gate_up .*last dimension 2F .* must be even"),
    ("w_down", (E, F, D - 1), r"moe: w_down has shape \(8, 128, 255\); expected \[8, 128, 256\] \(\[E, F, D\]"),
    ("w_down", (E, D, 2 * F), r"moe: w_down has shape \(8, 256, 256\); expected \[8, 128, 256\]"),
])
def test_moe_rejects_bad_shapes(name, shape, match):
    operands = {k: jnp.ones(v) for k, v in GOOD.items()}
    operands[name] = jnp.ones(shape)
    with pytest.raises(ValueError, match=match):
        jax.jit(lambda *a: nn.moe(*a, top_k=2)).trace(*operands.values())


@pytest.mark.parametrize("top_k, error, match", [
    (0, ValueError, r"moe: top_k must be in \[1, 8\], got 0"),
    (9, ValueError, r"moe: top_k must be in \[1, 8\], got 9"),
    (2.0, TypeError, r"moe: top_k must be a static Python int, got float"),
])
def test_moe_rejects_bad_top_k(top_k, error, match):
    with pytest.raises(error, match=match):
        nn.moe(*(jnp.ones(v) for v in GOOD.values()), top_k=top_k)


def test_moe_rejects_misplaced_options():
    operands = [jnp.ones(v) for v in GOOD.values()]
    with pytest.raises(ValueError, match=r"moe: capacity_factor applies to the expert-parallel layer only"):
        nn.moe(*operands, top_k=2, capacity_factor=1.0)
    with pytest.raises(ValueError, match=r"moe: the expert-parallel layer needs both mesh and axis_name"):
        nn.moe(*operands, top_k=2, axis_name="ep")
    with pytest.raises(TypeError, match=r"moe: x must be float32/bfloat16/float16, got int32"):
        nn.moe(jnp.ones((T, D), jnp.int32), *operands[1:], top_k=2)


@pytest.mark.parametrize("args, error, match", [
    (((T,), (D, E)), ValueError, r"route: x has shape \(96,\); expected \[T, D\]"),
    (((T, D), (D + 1, E)), ValueError, r"route: router_w has shape \(257, 8\); expected \[256, E\] \(\[D, E\] with D = "
                                       r"x.shape\[1\] = 256\)"),
    (((T, D), (D, E, 1)), ValueError, r"route: router_w has shape \(256, 8, 1\); expected \[256, E\]"),
])
def test_route_rejects_bad_shapes(args, error, match):
    with pytest.raises(error, match=match):
        nn.route(*(jnp.ones(s) for s in args), 2)
    with pytest.raises(TypeError, match=r"route: x must be float32/bfloat16/float16, got int32"):
        nn.route(jnp.ones((T, D), jnp.int32), jnp.ones((D, E)), 2)


def _expert_ffn_operands():
    return {"rows": jnp.ones((T, D)), "w_gate_up": jnp.ones((E, D, 2 * F)), "w_down": jnp.ones((E, F, D)),
            "group_sizes": jnp.full((E,), T // E, jnp.int32)}


@pytest.mark.parametrize("name, value, kwargs, error, match", [
    ("rows", jnp.ones((T,)), {}, ValueError, r"expert_ffn: rows has shape \(96,\); expected \[M, D\]"),
    ("w_gate_up", jnp.ones((E, D - 1, 2 * F)), {}, ValueError,
     r"expert_ffn: w_gate_up has shape \(8, 255, 256\); expected \[E, 256, 2F\] \(\[E, D, 2F\] with D = 256\)"),
    ("w_gate_up", jnp.ones((E, D, 2 * F - 1)), {}, ValueError, r"expert_ffn: w_gate_up .*2F .* must be even"),
    ("w_down", jnp.ones((E - 1, F, D)), {}, ValueError,
     r"expert_ffn: w_down has shape \(7, 128, 256\); expected \[8, 128, 256\] \(\[E, F, D\] with E = 8, F = 128"),
    ("group_sizes", jnp.ones((E,), jnp.float32), {}, TypeError,
     r"expert_ffn: group_sizes must be an integer array, got float32"),
    ("group_sizes", jnp.ones((E - 1,), jnp.int32), {}, ValueError,
     r"expert_ffn: group_sizes has shape \(7,\); expected \[8\] = \[E\] \(w_gate_up's E\)"),
    (None, None, {"gather": (jnp.arange(T), 2)}, ValueError,
     r"expert_ffn: gather's order has shape \(96,\); expected \[192\] = \[T \* top_k\] \(rows \[T, D\]\)"),
    (None, None, {"gather": (jnp.ones(2 * T, jnp.float32), 2)}, TypeError,
     r"expert_ffn: gather's order must be an integer array, got float32"),
    (None, None, {"gather": (jnp.arange(T), 0)}, ValueError, r"expert_ffn: gather's top_k must be >= 1, got 0"),
    (None, None, {"gather": jnp.arange(T)}, TypeError, r"expert_ffn: gather must be a pair \(order, top_k\)"),
])
@pytest.mark.parametrize("fp8", [True, False])
def test_expert_ffn_rejects_bad_operands(name, value, kwargs, error, match, fp8):
    operands = _expert_ffn_operands()
    if name is not None:
        operands[name] = value
    with pytest.raises(error, match=match):
        jax.jit(lambda *a: nn.expert_ffn(*a, fp8=fp8, **kwargs)).trace(*operands.values())


def test_layers_take_lists_and_refuse_scalars_as_every_public_function_does():
    """NumPy arrays and (nested) lists are arrays, as the GEMMs take them; Python scalars, None and strings are not."""
    x, router_w, w_gate_up, w_down = (np.asarray(v) for v in random_moe(11, tokens=16))
    w = np.asarray(jax.random.normal(jax.random.key(3), (D, 64)))
    sizes = [2] * E
    cases = [
        (nn.fp8_linear, (x, w)),
        (nn.route, (x, router_w, 2)),
        (lambda *a: nn.moe(*a, top_k=2), (x, router_w, w_gate_up, w_down)),
        (nn.expert_ffn, (x, w_gate_up, w_down, np.asarray(sizes, np.int32))),
    ]
    for fn, args in cases:
        as_lists = [a.tolist() if isinstance(a, np.ndarray) else a for a in args]
        np.testing.assert_array_equal(jax.tree.leaves(fn(*as_lists)), jax.tree.leaves(fn(*args)))
    for bad, kind in ((1.5, "float"), (None, "NoneType"), ("x", "str")):
        with pytest.raises(TypeError, match=rf"fp8_linear: x must be an array, got {kind}"):
            nn.fp8_linear(bad, w)
        with pytest.raises(TypeError, match=rf"expert_ffn: group_sizes must be an array, got {kind}"):
            nn.expert_ffn(x, w_gate_up, w_down, bad)
