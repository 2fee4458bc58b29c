"""Equinox modules over `jax_deepgemm.nn`: `FP8Linear` (a drop-in for `eqx.nn.Linear`) and `FP8MoE`.

Weights are plain float arrays (float32 by default) in the module's pytree; every call quantizes them to FP8 on
the fly, so `eqx.filter_grad` and optimizers see ordinary float leaves. Unlike `eqx.nn.Linear`, the modules take
any leading dimensions (a batch of tokens in one call, which is what the GEMMs want); `jax.vmap` works too.
"""

from __future__ import annotations

try:
    import equinox as eqx
except ImportError as e:  # the framework is an optional extra
    raise ImportError("jax_deepgemm.nn.equinox needs Equinox: pip install 'jax_deepgemm[equinox]'") from e

import math

import jax
import jax.numpy as jnp

from .._types import ArrayLike, DTypeLike
from .expert_parallel import shard_experts
from .experts import init_moe_weights
from .linear import fp8_linear
from .moe import moe

__all__ = ["FP8Linear", "FP8MoE"]


class FP8Linear(eqx.Module):
    """y = weight @ x + bias over x's last dimension, the product in FP8 (forward and backward). weight is
    [out_features, in_features] and both are initialised as in `eqx.nn.Linear`; the output has x's dtype."""

    weight: jax.Array
    bias: jax.Array | None
    in_features: int = eqx.field(static=True)
    out_features: int = eqx.field(static=True)

    def __init__(self, in_features: int, out_features: int, use_bias: bool = True, *, dtype: DTypeLike = jnp.float32,
                 key: ArrayLike):
        w_key, b_key = jax.random.split(key)
        bound = 1 / math.sqrt(in_features)
        self.weight = jax.random.uniform(w_key, (out_features, in_features), dtype, -bound, bound)
        self.bias = jax.random.uniform(b_key, (out_features,), dtype, -bound, bound) if use_bias else None
        self.in_features = in_features
        self.out_features = out_features

    def __call__(self, x: ArrayLike, *, key: ArrayLike | None = None) -> jax.Array:
        del key  # deterministic; accepted like every Equinox layer's
        return fp8_linear(x, self.weight.T, self.bias)


class FP8MoE(eqx.Module):
    """A Mixture-of-Experts SwiGLU FFN on the grouped FP8 GEMMs (`jax_deepgemm.nn.moe`): x [..., features] ->
    [..., features].

    Weights: `router` [features, num_experts], `gate_up` [num_experts, features, 2 * intermediate] and `down`
    [num_experts, intermediate, features]. With `mesh` and `axis_name` the layer is expert-parallel over that mesh
    axis: the expert weights are created sharded over it (num_experts / devices per device) and tokens travel to
    their experts with all_to_all; `capacity_factor` as in `moe` (None: never drop a token)."""

    router: jax.Array
    gate_up: jax.Array
    down: jax.Array
    top_k: int = eqx.field(static=True)
    mesh: jax.sharding.Mesh | None = eqx.field(static=True)
    axis_name: str | None = eqx.field(static=True)
    capacity_factor: float | None = eqx.field(static=True)

    def __init__(self, features: int, intermediate: int, num_experts: int, top_k: int, *,
                 dtype: DTypeLike = jnp.float32, mesh: jax.sharding.Mesh | None = None, axis_name: str | None = None,
                 capacity_factor: float | None = None, key: ArrayLike):
        router, gate_up, down = init_moe_weights(key, features, intermediate, num_experts, dtype)
        if mesh is not None and axis_name is not None:
            gate_up, down = shard_experts(gate_up, mesh, axis_name), shard_experts(down, mesh, axis_name)
        self.router, self.gate_up, self.down = router, gate_up, down
        self.top_k = top_k
        self.mesh = mesh
        self.axis_name = axis_name
        self.capacity_factor = capacity_factor

    def __call__(self, x: ArrayLike, *, key: ArrayLike | None = None) -> jax.Array:
        del key  # deterministic routing; accepted like every Equinox layer's
        return moe(x, self.router, self.gate_up, self.down, top_k=self.top_k, mesh=self.mesh,
                   axis_name=self.axis_name, capacity_factor=self.capacity_factor)
