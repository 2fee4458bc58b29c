"""`moe`: a Mixture-of-Experts FFN layer (top-k router, SwiGLU experts on the grouped FP8 GEMMs, weighted combine),
on one device or expert-parallel over a mesh axis."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._types import ArrayLike
from ..primitives import auto_axes_if_explicit
from .expert_parallel import expert_parallel_moe
from .experts import check_moe_args, expert_ffn, route, same_spec_as_first, sort_by_expert


def _moe_result_spec(x, *args, mesh=None, **kwargs):
    """x's sharding; with a mesh the expert-parallel layer places its operands itself (expert_parallel.py)."""
    return None if mesh is not None else same_spec_as_first(x)


@auto_axes_if_explicit(_moe_result_spec)
def moe(x: ArrayLike, router_w: ArrayLike, w_gate_up: ArrayLike, w_down: ArrayLike, *, top_k: int, fp8: bool = True,
        mesh: jax.sharding.Mesh | None = None, axis_name: str | None = None,
        capacity_factor: float | None = None) -> jax.Array:
    """y = sum over each token's top_k experts e of weight_e * W_down[e]^T (silu(gate) * up), with
    [gate | up] = W_gate_up[e]^T x.

    x [..., D] (bf16/f32), router_w [D, E], w_gate_up [E, D, 2F] (gate then up), w_down [E, F, D] -> [..., D] in
    x.dtype. The router runs in float32: softmax over the logits, the top_k experts per token, their probabilities
    renormalised to sum to 1 (differentiable in router_w through these weights). The expert products run in FP8
    forward and backward (`ragged_dot`); fp8=False computes the same layer with jax.lax.ragged_dot in x.dtype.

    With `mesh` and `axis_name`, the layer runs expert-parallel over that mesh axis (see `expert_parallel`):
    tokens and experts split over its devices, tokens exchanged with all_to_all; the same FP8 math as on one device.
    `capacity_factor` (expert-parallel only; None: never drop) bounds the rows one device sends another."""
    if mesh is not None or axis_name is not None:
        if mesh is None or axis_name is None:
            raise ValueError("moe: the expert-parallel layer needs both mesh and axis_name, got "
                             f"mesh={mesh!r}, axis_name={axis_name!r}")
        return expert_parallel_moe(x, router_w, w_gate_up, w_down, top_k=top_k, mesh=mesh, axis_name=axis_name,
                                   capacity_factor=capacity_factor, fp8=fp8)
    if capacity_factor is not None:
        raise ValueError("moe: capacity_factor applies to the expert-parallel layer only (pass mesh and axis_name); "
                         "on one device every token reaches its experts")
    x, x2, router_w, w_gate_up, w_down, top_k = check_moe_args("moe", x, router_w, w_gate_up, w_down, top_k)
    if x2.shape[0] == 0:  # no token: an empty result (and zero gradients for the weights)
        return jnp.zeros(x.shape, x.dtype)
    weights, expert_ids = route(x2, router_w, top_k)
    # Dispatch: (token, slot) pairs sorted by expert, so that each expert owns a contiguous run of rows.
    order, group_sizes = sort_by_expert(expert_ids.reshape(-1), router_w.shape[1])
    y = expert_ffn(x2, w_gate_up, w_down, group_sizes, fp8=fp8, gather=(order, top_k), combine=weights)
    return y.reshape(x.shape)
