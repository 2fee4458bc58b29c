"""Flax NNX modules over `jax_deepgemm.nn`: `FP8Linear` (a drop-in for `nnx.Linear`) and `FP8MoE`.

Parameters are ordinary `nnx.Param`s in their master dtype (float32 by default); every call quantizes them to FP8
on the fly, so optimizers, checkpoints and `nnx.grad` see plain float weights.
"""

from __future__ import annotations

try:
    from flax import nnx
except ImportError as e:  # the framework is an optional extra
    raise ImportError("jax_deepgemm.nn.flax needs Flax (NNX): pip install 'jax_deepgemm[flax]'") from e

import jax
import jax.numpy as jnp

from .._types import ArrayLike, DTypeLike
from .expert_parallel import shard_experts
from .experts import init_moe_weights
from .linear import fp8_linear
from .moe import moe

__all__ = ["FP8Linear", "FP8MoE"]


class FP8Linear(nnx.Module):
    """y = x @ kernel + bias with the product in FP8 (forward and backward). kernel is [in_features, out_features]
    as in `nnx.Linear`, with the same default initializers; the output has x's dtype."""

    def __init__(self, in_features: int, out_features: int, *, use_bias: bool = True,
                 param_dtype: DTypeLike = jnp.float32,
                 kernel_init: jax.nn.initializers.Initializer = jax.nn.initializers.lecun_normal(),
                 bias_init: jax.nn.initializers.Initializer = jax.nn.initializers.zeros, rngs: nnx.Rngs):
        self.in_features = in_features
        self.out_features = out_features
        self.kernel = nnx.Param(kernel_init(rngs.params(), (in_features, out_features), param_dtype))
        self.bias = (nnx.Param(bias_init(rngs.params(), (out_features,), param_dtype)) if use_bias
                     else nnx.data(None))

    def __call__(self, x: ArrayLike) -> jax.Array:
        return fp8_linear(x, self.kernel[...], None if self.bias is None else self.bias[...])


class FP8MoE(nnx.Module):
    """A Mixture-of-Experts SwiGLU FFN on the grouped FP8 GEMMs (`jax_deepgemm.nn.moe`): x [..., features] ->
    [..., features].

    Parameters: `router` [features, num_experts], `gate_up` [num_experts, features, 2 * intermediate] and `down`
    [num_experts, intermediate, features]. With `mesh` and `axis_name` the layer is expert-parallel over that mesh
    axis: the expert weights are created sharded over it (num_experts / devices per device) and tokens travel to
    their experts with all_to_all; `capacity_factor` as in `moe` (None: never drop a token)."""

    def __init__(self, features: int, intermediate: int, num_experts: int, top_k: int, *,
                 param_dtype: DTypeLike = jnp.float32, mesh: jax.sharding.Mesh | None = None,
                 axis_name: str | None = None, capacity_factor: float | None = None, rngs: nnx.Rngs):
        self.top_k = top_k
        self.mesh = mesh
        self.axis_name = axis_name
        self.capacity_factor = capacity_factor
        router, gate_up, down = init_moe_weights(rngs.params(), features, intermediate, num_experts, param_dtype)
        if mesh is not None and axis_name is not None:
            gate_up, down = shard_experts(gate_up, mesh, axis_name), shard_experts(down, mesh, axis_name)
        self.router = nnx.Param(router)
        self.gate_up = nnx.Param(gate_up)
        self.down = nnx.Param(down)

    def __call__(self, x: ArrayLike) -> jax.Array:
        return moe(x, self.router[...], self.gate_up[...], self.down[...], top_k=self.top_k, mesh=self.mesh,
                   axis_name=self.axis_name, capacity_factor=self.capacity_factor)
