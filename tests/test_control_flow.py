"""Every family inside JAX's control flow under jit: lax.cond (either branch), lax.switch, lax.while_loop and
lax.scan, and gradients through cond and scan and under vmap of a cond. On a GPU, XLA may run such programs as
conditional and loop command buffers with the kernels captured inside them (not checked here); the results must be
those of the same computation outside any control flow. Each branch or iteration scales x by a traced factor, so that XLA cannot
hoist the families out of a loop or fold a branch away."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
from families import INPUTS, assert_same_outputs, cuda_kernel_calls, family_outputs
from jax_deepgemm import nn


def _program(i):
    return family_outputs(i, expert_parallel=False)


def _scaled(i, s):
    """The inputs with x multiplied by s (a power of two: exact)."""
    return dict(i, x=i["x"] * s)


def _twice(k):
    """2 for a traced k of 1, else 1."""
    return jnp.where(k == 1, 2.0, 1.0).astype(jnp.float32)


def _while(i):
    def body(carry):
        k, _ = carry
        return k + 1, _program(_scaled(i, _twice(k)))

    zeros = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), jax.eval_shape(_program, i))
    return jax.lax.while_loop(lambda carry: carry[0] < 2, body, (jnp.int32(0), zeros))[1]  # the k = 1 pass


def _scan(i):
    """Both steps' outputs stacked; step 1 has x doubled."""
    return jax.lax.scan(lambda _, k: (None, _program(_scaled(i, _twice(k)))), None, jnp.arange(2, dtype=jnp.int32))[1]


CONSTRUCTS = {  # name: (program of (inputs, selector), selector, whether its result is the doubled-x program's)
    "cond_true": (lambda i, p: jax.lax.cond(p, _program, lambda j: _program(_scaled(j, 2.0)), i), True, False),
    "cond_false": (lambda i, p: jax.lax.cond(p, _program, lambda j: _program(_scaled(j, 2.0)), i), False, True),
    "switch": (lambda i, n: jax.lax.switch(n, [_program, lambda j: _program(_scaled(j, 2.0)),
                                                lambda j: _program(_scaled(j, 4.0))], i), 1, True),
    "while_loop": (lambda i, _: _while(i), 0, True),
}


@pytest.fixture(scope="module")
def plain_outputs():
    """The families outside control flow: on the inputs, and on them with x doubled."""
    run = jax.jit(_program)
    return {False: jax.tree.map(np.asarray, run(INPUTS)), True: jax.tree.map(np.asarray, run(_scaled(INPUTS, 2.0)))}


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_families_inside_control_flow(construct, plain_outputs):
    program, selector, doubled = CONSTRUCTS[construct]
    got = jax.jit(program)(jax.device_put(INPUTS), selector)
    assert_same_outputs(jax.tree.map(np.asarray, got), plain_outputs[doubled], construct, exact_on_reference=False)


def test_families_inside_scan(plain_outputs):
    steps = jax.tree.map(np.asarray, jax.jit(_scan)(jax.device_put(INPUTS)))
    for k, doubled in enumerate([False, True]):
        assert_same_outputs(jax.tree.map(lambda s: s[k], steps), plain_outputs[doubled], f"scan step {k}",
                            exact_on_reference=False)


def _distinct_kernel_calls(program, *args):
    """Distinct, since JAX versions differ in how often they emit an outlined function (0.11.2 twice in a while
    body)."""
    return set(cuda_kernel_calls(program, *args))


@pytest.mark.parametrize("construct", ["cond_true", "switch", "while_loop"])
def test_cuda_lowering_inside_control_flow(construct):
    """Each branch and loop body lowers to the plain program's kernel calls (checked without a GPU)."""
    shapes = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), INPUTS)
    plain = _distinct_kernel_calls(_program, shapes)
    assert len(plain) > 20
    program, selector, _ = CONSTRUCTS[construct]
    assert _distinct_kernel_calls(program, shapes, selector) == plain
    assert _distinct_kernel_calls(_scan, shapes) == plain


def _losses():
    """Scalar losses of x over the differentiable ops (fp8_dot, ragged_dot, the MoE layer)."""
    w, wg, sizes = INPUTS["w"].T, np.swapaxes(INPUTS["w_groups"], 1, 2), INPUTS["group_sizes"]
    moe_params = (INPUTS["router"], INPUTS["gate_up"], INPUTS["down"])
    return {
        "fp8_dot": lambda x: dg.fp8_dot(x, w).sum(),
        "ragged_dot": lambda x: dg.ragged_dot(x, wg, sizes).sum(),
        "moe": lambda x: nn.moe(x[:64], *moe_params, top_k=2).astype(jnp.float32).sum(),
    }


@pytest.mark.parametrize("op", ["fp8_dot", "ragged_dot", "moe"])
def test_gradients_through_control_flow(op):
    loss = _losses()[op]
    x = jnp.asarray(INPUTS["x"])
    want, want_doubled = (np.asarray(jax.jit(jax.grad(loss))(x * s)) for s in (1.0, 2.0))
    cond = lambda p, x: jax.lax.cond(p, loss, lambda u: loss(u * 2.0), x)  # noqa: E731
    got = {
        "cond_true": jax.grad(cond, 1)(True, x),
        "cond_false": jax.grad(cond, 1)(False, x) / 2.0,  # d loss(2x) / dx = 2 loss'(2x)
        "scan": jax.grad(lambda x: jax.lax.scan(lambda c, s: (c + loss(x * s) / s, None), 0.0,
                                                jnp.array([1.0, 2.0], jnp.float32))[0])(x),
        # vmap of a cond with a batched predicate runs both branches and selects
        "vmap_cond": jax.vmap(jax.grad(cond, 1))(jnp.array([True, False]), jnp.stack([x, x]))[0],
    }
    both = want + want_doubled  # the scan's: d/dx [loss(x) + loss(2x) / 2] = loss'(x) + loss'(2x)
    for name, g in got.items():
        expected = {"cond_false": want_doubled, "scan": both}.get(name, want)
        assert_same_outputs({"grad": np.asarray(g)}, {"grad": expected}, f"{op} {name}",
                            exact_on_reference=False)
