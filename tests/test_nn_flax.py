"""jax_deepgemm.nn.flax: FP8Linear against nnx.Linear with the same weights, FP8MoE against the functional layer,
a jitted NNX training step, and the error when Flax is missing."""

from __future__ import annotations

import importlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from jax_deepgemm import nn
from jax_deepgemm.nn.flax import FP8Linear, FP8MoE
import nn_common
from nn_common import assert_close_in_direction


def test_fp8_linear_is_nnx_linear_in_fp8():
    ours = FP8Linear(320, 96, rngs=nnx.Rngs(0))
    ref = nnx.Linear(320, 96, rngs=nnx.Rngs(0))
    assert ours.kernel[...].shape == (320, 96) and ours.bias[...].shape == (96,)
    ours.bias[...] = jax.random.normal(jax.random.key(1), (96,))  # nnx.Linear starts with a zero bias
    ref.kernel[...], ref.bias[...] = ours.kernel[...], ours.bias[...]
    x = jax.random.normal(jax.random.key(2), (2, 24, 320))

    def loss(model, x):
        y = model(x)
        return jnp.sum(y * jnp.cos(jnp.arange(96.0))), y

    results = {}
    for name, model in (("ours", ours), ("ref", ref)):
        with jax.default_matmul_precision("highest"):
            (_, y), (g, gx) = nnx.jit(nnx.value_and_grad(loss, argnums=(0, 1), has_aux=True))(model, x)
        results[name] = (y, g["kernel"][...], g["bias"][...], gx)
    for what, a, b in zip(("output", "grad kernel", "grad bias", "grad x"), results["ours"], results["ref"]):
        assert a.shape == b.shape, what
        assert_close_in_direction(a, b, what)


def test_fp8_linear_without_bias():
    layer = FP8Linear(128, 32, use_bias=False, rngs=nnx.Rngs(3))
    assert layer.bias is None
    assert len(jax.tree.leaves(nnx.state(layer, nnx.Param))) == 1
    x = jax.random.normal(jax.random.key(4), (8, 128), jnp.bfloat16)
    y = layer(x)
    assert y.dtype == jnp.bfloat16 and y.shape == (8, 32)
    assert_close_in_direction(y, nn_common.to64(x) @ nn_common.to64(layer.kernel[...]), "no-bias output")


def test_fp8_moe_training_step():
    """An optimizer-free SGD step under nnx.jit: gradients equal the functional layer's, and the loss goes down."""
    d, f, e, k = nn_common.D, nn_common.F, 8, 2
    model = FP8MoE(d, f, e, k, rngs=nnx.Rngs(5))
    assert (model.router[...].shape, model.gate_up[...].shape, model.down[...].shape) == ((d, e), (e, d, 2 * f),
                                                                                          (e, f, d))
    x = jax.random.normal(jax.random.key(6), (4, 32, d))
    target = jax.random.normal(jax.random.key(7), (4, 32, d))
    weights = (model.router[...], model.gate_up[...], model.down[...])

    def loss(model):
        return jnp.mean(jnp.square(model(x) - target))

    @nnx.jit
    def step(model, lr):
        value, grads = nnx.value_and_grad(loss)(model)
        params = nnx.state(model, nnx.Param)
        nnx.update(model, jax.tree.map(lambda p, g: p - lr * g, params, grads))
        return value, grads

    def functional_loss(*w):
        return jnp.mean(jnp.square(nn.moe(x, *w, top_k=k) - target))

    want_loss, want = jax.jit(jax.value_and_grad(functional_loss, argnums=(0, 1, 2)))(*weights)
    losses = []
    for _ in range(3):
        value, grads = step(model, 5.0)
        if not losses:
            np.testing.assert_allclose(value, want_loss, rtol=1e-6)
            for name, w in zip(("router", "gate_up", "down"), want):
                assert_close_in_direction(grads[name][...], w, f"grad {name}")
                np.testing.assert_allclose(grads[name][...], w, rtol=1e-5, atol=1e-6 * float(jnp.abs(w).max()),
                                           err_msg=name)
        losses.append(float(value))
    assert losses[2] < losses[1] < losses[0], losses
    assert not np.allclose(model.down[...], weights[2]), "the step should have moved the weights"


def test_import_without_flax_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "flax", None)  # makes `import flax` raise ImportError
    monkeypatch.delitem(sys.modules, "jax_deepgemm.nn.flax")
    with pytest.raises(ImportError, match=r"pip install 'jax_deepgemm\[flax\]'"):
        importlib.import_module("jax_deepgemm.nn.flax")
