"""Layers on the FP8 GEMMs: `fp8_linear` (dense) and `moe` (Mixture-of-Experts, on one device or expert-parallel
over a mesh axis), as plain functions of arrays, forward and backward in FP8.

Framework modules over them, importable when the framework is installed:
`jax_deepgemm.nn.flax` (Flax NNX, `pip install 'jax_deepgemm[flax]'`) and `jax_deepgemm.nn.equinox`
(`pip install 'jax_deepgemm[equinox]'`), each with `FP8Linear` and `FP8MoE`.
"""

from .expert_parallel import capacity, expert_parallel_moe, moe_expert_parallel, shard_experts
from .experts import expert_ffn, init_moe_weights, route
from .linear import fp8_linear
from .moe import moe

__all__ = [
    "capacity",
    "expert_ffn",
    "expert_parallel_moe",
    "fp8_linear",
    "init_moe_weights",
    "moe",
    "moe_expert_parallel",
    "route",
    "shard_experts",
]
