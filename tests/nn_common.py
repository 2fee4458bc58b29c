"""Shared by jax_deepgemm.nn's test modules: random MoE operands, float64 NumPy oracles of the MoE layer (every
expert applied to every token: no sorting, no exchange) and of which (token, slot) pairs a capacity-bounded
expert-parallel layer keeps, and the accuracy check of an FP8 result against a float one."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import nn
from conftest import cosine, to64

D, F = 256, 128

# Cosine similarity between an FP8 layer and the float32 one: FP8 (e4m3, 3 mantissa bits) through two grouped
# GEMMs and SwiGLU keeps above 0.998 on random data; a wrong scale, route or permutation falls far below.
MIN_COSINE = 0.995


def assert_close_in_direction(got, want, what):
    """got is want up to FP8 error: cosine > MIN_COSINE, norms within 5%, finite, neither all zeros."""
    got64, want64 = to64(got), to64(want)
    assert np.linalg.norm(want64) > 0 and np.linalg.norm(got64) > 0, f"{what}: all zeros"
    assert np.all(np.isfinite(got64)), f"{what}: not finite"
    c = cosine(got, want)
    assert c > MIN_COSINE, f"{what}: cosine {c:.5f} <= {MIN_COSINE}"
    # The direction alone would accept a scaled result: the norms must agree too.
    np.testing.assert_allclose(np.linalg.norm(got64), np.linalg.norm(want64), rtol=0.05, err_msg=what)


def grads(layer, args, probe):
    """d/d args of sum(layer(*args) * probe), jitted."""
    return jax.jit(jax.grad(lambda *a: jnp.sum(layer(*a).astype(jnp.float32) * probe), range(len(args))))(*args)


def random_moe(seed: int, tokens: int, experts: int, dtype=jnp.float32, skew: float = 0.0):
    """(x [tokens, D], router_w [D, E], w_gate_up [E, D, 2F], w_down [E, F, D]). skew > 0 gives every token's
    expert-0 logit `skew` more (x[:, 0] = 1, router_w[0, 0] = skew): expert 0 gets most tokens."""
    kx, kw = jax.random.split(jax.random.key(seed))
    x = jax.random.normal(kx, (tokens, D), jnp.float32)
    router_w, w_gate_up, w_down = nn.init_moe_weights(kw, D, F, experts)
    if skew:
        x = x.at[:, 0].set(1.0)
        router_w = router_w.at[0, 0].set(skew)
    return x.astype(dtype), router_w, w_gate_up, w_down


def route_oracle(x, router_w, top_k):
    """(weights [T, top_k], expert ids [T, top_k]) in float64, best expert first."""
    logits = to64(x) @ to64(router_w)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    ids = np.argsort(-p, axis=-1, kind="stable")[:, :top_k]
    weights = np.take_along_axis(p, ids, -1)
    return weights / weights.sum(-1, keepdims=True), ids


def moe_oracle(x, router_w, w_gate_up, w_down, top_k, keep=None):
    """The MoE layer: [T, D]. `keep` [T, top_k] (bool) zeroes the pairs a capacity-bounded layer drops."""
    weights, ids = route_oracle(x, router_w, top_k)
    if keep is not None:
        weights = weights * keep
    x, w_gate_up, w_down = map(to64, (x, w_gate_up, w_down))
    gate, up = np.split(np.einsum("td,edf->tef", x, w_gate_up), 2, axis=-1)
    expert_out = np.einsum("tef,efd->ted", gate / (1 + np.exp(-gate)) * up, w_down)  # every expert, every token
    return np.einsum("tk,tkd->td", weights, np.take_along_axis(expert_out, ids[..., None], 1))


def kept_pairs(ids, devices: int, experts: int, capacity: int) -> np.ndarray:
    """The (token, slot) pairs an expert-parallel layer with `capacity` rows per device pair keeps: tokens split in
    order over the devices; on each, pairs taken in (expert, token, slot) order fill their destination's rows."""
    tokens, top_k = ids.shape
    local = tokens // devices
    keep = np.zeros(ids.shape, bool)
    for j in range(devices):
        pairs = ids[j * local:(j + 1) * local].reshape(-1)
        used = np.zeros(devices, int)
        for p in np.argsort(pairs, kind="stable"):
            dest = pairs[p] // (experts // devices)
            keep[j * local + p // top_k, p % top_k] = used[dest] < capacity
            used[dest] += 1
    return keep
