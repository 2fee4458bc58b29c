"""fp8_dot, ragged_dot and the MoE layer under jax.checkpoint (rematerialization): gradients equal those without it,
and with `dg.fp8_dots_saveable` the backward pass runs no forward GEMM again (the results are named, see
`dg.CHECKPOINT_NAMES`), where `nothing_saveable` runs each one twice. Runs wherever the suite runs: the count is of
our primitives in the program, the same on CPU and GPU."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import BF16, F32, cosine, kernels_active, randn, seed_of

import jax_deepgemm as dg
from jax_deepgemm import nn, primitives

GEMM_PRIMITIVES = {f.primitive.name for f in primitives.FAMILIES}  # (not the quantization's, which remat repeats)

POLICIES = {"fp8_dots_saveable": dg.fp8_dots_saveable,
            "names_only": jax.checkpoint_policies.save_only_these_names(*dg.CHECKPOINT_NAMES),
            "nothing_saveable": jax.checkpoint_policies.nothing_saveable}


def gemm_calls(fn, *args) -> int:
    """Our GEMM primitives in fn's program, in every sub-program (remat, custom VJPs, jit) as many times as it runs."""
    def count(jaxpr) -> int:
        n = 0
        for eqn in jaxpr.eqns:
            n += eqn.primitive.name in GEMM_PRIMITIVES
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else (value,):
                    if isinstance(sub, jax.extend.core.ClosedJaxpr):
                        n += count(sub.jaxpr)
                    elif isinstance(sub, jax.extend.core.Jaxpr):
                        n += count(sub)
        return n
    return count(jax.make_jaxpr(fn)(*args).jaxpr)


def _mlp_case():
    x = randn(seed_of("remat", "x"), (256, 512)).astype(BF16)
    w1 = randn(seed_of("remat", "w1"), (512, 384), spread=False) * 0.05
    w2 = randn(seed_of("remat", "w2"), (384, 256), spread=False) * 0.05

    def loss(x, w1, w2):
        return jnp.sum(dg.fp8_dot(jax.nn.gelu(dg.fp8_dot(x, w1)), w2).astype(F32) ** 2)
    return loss, (x, w1, w2), 2  # two forward GEMMs


def _ragged_case():
    sizes = jnp.asarray([100, 0, 156], jnp.int32)
    x = randn(seed_of("remat", "rx"), (256, 256))
    w1 = randn(seed_of("remat", "rw1"), (3, 256, 192), spread=False) * 0.05
    w2 = randn(seed_of("remat", "rw2"), (3, 192, 256), spread=False) * 0.05

    def loss(x, w1, w2):
        h = jax.nn.silu(dg.ragged_dot(x, w1, sizes))
        return jnp.sum(dg.ragged_dot(h, w2, sizes) ** 2)
    return loss, (x, w1, w2), 2


def _moe_case():
    x = randn(seed_of("remat", "mx"), (2, 64, 256), spread=False)
    router = randn(seed_of("remat", "router"), (256, 4), spread=False)
    w_gate_up = randn(seed_of("remat", "gu"), (4, 256, 2 * 128), spread=False) * 0.05
    w_down = randn(seed_of("remat", "down"), (4, 128, 256), spread=False) * 0.05

    def loss(x, router, w_gate_up, w_down):
        return jnp.sum(nn.moe(x, router, w_gate_up, w_down, top_k=2) ** 2)
    return loss, (x, router, w_gate_up, w_down), 2


CASES = {"fp8_dot": _mlp_case, "ragged_dot": _ragged_case, "moe": _moe_case}


def kernel_calls(fn, *args) -> int:
    """Our kernels' calls in fn's optimized program (after XLA's dead-code and common-subexpression passes)."""
    return jax.jit(fn).lower(*args).compile().as_text().count('custom_call_target="jdg_fp8_gemm"')


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_gradients_under_checkpoint(case, policy):
    """A training step's loss and weight gradients (value_and_grad: the loss is used, so its forward pass stays)."""
    loss, args, forward_gemms = CASES[case]()
    argnums = tuple(range(1, len(args)))  # the weights (and router)
    plain = jax.value_and_grad(loss, argnums=argnums)
    remat = jax.value_and_grad(jax.checkpoint(loss, policy=POLICIES[policy]), argnums=argnums)
    (loss_got, grads_got), (loss_want, grads_want) = jax.jit(remat)(*args), jax.jit(plain)(*args)
    np.testing.assert_allclose(float(loss_got), float(loss_want), rtol=1e-4)  # a float32 sum, in another order
    for got, want in zip(grads_got, grads_want):
        if kernels_active():  # XLA may fuse the two programs' bf16 steps apart: an FP8 step on a few elements
            assert cosine(got, want) > 0.9999
        else:
            np.testing.assert_array_equal(np.asarray(got, np.float64), np.asarray(want, np.float64))
    extra = forward_gemms if policy == "nothing_saveable" else 0
    calls, without = gemm_calls(remat, *args), gemm_calls(plain, *args)
    assert calls == without + extra, (calls, without)
    if kernels_active():  # and so the GPU program runs them
        calls, without = kernel_calls(remat, *args), kernel_calls(plain, *args)
        assert calls == without + extra, (calls, without)
