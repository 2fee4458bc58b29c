"""jax_deepgemm.nn.equinox: FP8Linear against eqx.nn.Linear with the same weights (batched and under vmap), FP8MoE's
eqx.filter_grad under eqx.filter_jit against the functional layer, and the error when Equinox is missing."""

from __future__ import annotations

import importlib
import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax_deepgemm import nn
from jax_deepgemm.nn.equinox import FP8Linear, FP8MoE
import nn_common
from nn_common import assert_close_in_direction


def test_fp8_linear_is_eqx_linear_in_fp8():
    ours = FP8Linear(320, 96, key=jax.random.key(0))
    ref = eqx.nn.Linear(320, 96, key=jax.random.key(0))
    assert ours.weight.shape == ref.weight.shape == (96, 320) and ours.bias.shape == (96,)
    ref = eqx.tree_at(lambda m: (m.weight, m.bias), ref, (ours.weight, ours.bias))
    x = jax.random.normal(jax.random.key(1), (24, 320))
    probe = jnp.cos(jnp.arange(96.0))

    @eqx.filter_jit
    def value_and_grads(model, x):
        def loss(model, x):
            y = jax.vmap(model)(x)  # eqx.nn.Linear takes one example; ours takes any leading dimensions too
            return jnp.sum(y * probe), y
        return eqx.filter_value_and_grad(loss, has_aux=True)(model, x)

    with jax.default_matmul_precision("highest"):
        (_, want_y), want_g = value_and_grads(ref, x)
    (_, got_y), got_g = value_and_grads(ours, x)
    assert_close_in_direction(got_y, want_y, "output")
    assert_close_in_direction(got_g.weight, want_g.weight, "grad weight")
    assert_close_in_direction(got_g.bias, want_g.bias, "grad bias")
    batched = eqx.filter_jit(lambda m, x: m(x))(ours, x.reshape(4, 6, 320))
    np.testing.assert_allclose(batched.reshape(24, 96), got_y, rtol=1e-5, atol=1e-5)


def test_fp8_linear_without_bias():
    layer = FP8Linear(128, 32, use_bias=False, key=jax.random.key(2))
    assert layer.bias is None and len(jax.tree.leaves(layer)) == 1
    x = jax.random.normal(jax.random.key(3), (8, 128), jnp.bfloat16)
    y = layer(x)
    assert y.dtype == jnp.bfloat16 and y.shape == (8, 32)
    assert_close_in_direction(y, nn_common.to64(x) @ nn_common.to64(layer.weight).T, "no-bias output")


def test_fp8_moe_filter_grad_under_filter_jit():
    """Gradients equal the functional layer's; an SGD step with them lowers the loss."""
    d, f, e, k = nn_common.D, nn_common.F, 8, 2
    model = FP8MoE(d, f, e, k, key=jax.random.key(4))
    assert (model.router.shape, model.gate_up.shape, model.down.shape) == ((d, e), (e, d, 2 * f), (e, f, d))
    x = jax.random.normal(jax.random.key(5), (4, 32, d))
    target = jax.random.normal(jax.random.key(6), (4, 32, d))

    @eqx.filter_jit
    def step(model):
        value, grads = eqx.filter_value_and_grad(lambda m: jnp.mean(jnp.square(m(x) - target)))(model)
        return value, grads, eqx.apply_updates(model, jax.tree.map(lambda g: -5.0 * g, grads))

    def functional_loss(*w):
        return jnp.mean(jnp.square(nn.moe(x, *w, top_k=k) - target))

    weights = (model.router, model.gate_up, model.down)
    want_loss, want = jax.jit(jax.value_and_grad(functional_loss, argnums=(0, 1, 2)))(*weights)
    loss_0, grads, model = step(model)
    np.testing.assert_allclose(loss_0, want_loss, rtol=1e-6)
    for name, w in zip(("router", "gate_up", "down"), want):
        got = getattr(grads, name)
        assert_close_in_direction(got, w, f"grad {name}")
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6 * float(jnp.abs(w).max()), err_msg=name)
    loss_1, _, _ = step(model)
    assert loss_1 < loss_0


def test_import_without_equinox_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "equinox", None)  # makes `import equinox` raise ImportError
    monkeypatch.delitem(sys.modules, "jax_deepgemm.nn.equinox")
    with pytest.raises(ImportError, match=r"pip install 'jax_deepgemm\[equinox\]'"):
        importlib.import_module("jax_deepgemm.nn.equinox")
