"""Expert parallelism: each device of a mesh axis holds E / n experts; tokens travel to their experts' devices and
back with `jax.lax.all_to_all`.

Why all_to_all with a fixed capacity rather than `jax.lax.ragged_all_to_all`: XLA:CPU has no ragged-all-to-all
(jax 0.11.2 fails with "HLO opcode `ragged-all-to-all` is not supported by XLA:CPU ThunkEmitter"), and the layer
must run, and be tested, on every backend. A fixed capacity C per (source, destination) device pair keeps every
shape static: each device sends an [n * C, D] buffer, bucket j going to device j. With the default capacity no row
can be dropped (C is the most rows one device can send another); a `capacity_factor` shrinks the buffers to
`capacity_factor * T_local * top_k / n` rows per pair, and a token's expert output past that is dropped (counts as
zero in its weighted sum), the GShard/Switch convention.

Tokens keep their order within an expert on both paths (stable sorts, tokens sharded in order over the devices),
so each expert sees its rows in the same order as the single-device layer, and the FP8 weight gradient quantizes
the same 128-token blocks: the two layers do the same arithmetic, forward and backward (up to where XLA's fusions
keep or skip a rounding of an intermediate).
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

from .._types import ArrayLike
from .experts import (check_moe_args, dispatch, expert_ffn, permute_rows, pick_rows, place_rows, route,
                      sort_by_expert, sum_slots)


def capacity(tokens: int, top_k: int, experts_per_device: int, devices: int, capacity_factor: float | None) -> int:
    """Rows one device may send to another. A token sends at most min(top_k, E / n) rows to one device, so
    `tokens * min(top_k, E / n)` never drops; capacity_factor c gives ceil(c * tokens * top_k / n), capped there."""
    no_drop = tokens * min(top_k, experts_per_device)
    if capacity_factor is None:
        return no_drop
    return max(1, min(no_drop, math.ceil(capacity_factor * tokens * top_k / devices)))


def _check_capacity_factor(fn: str, capacity_factor) -> float | None:
    if capacity_factor is None:
        return None
    if isinstance(capacity_factor, (bool, jax.core.Tracer)) or not isinstance(capacity_factor, (int, float)):
        raise TypeError(f"{fn}: capacity_factor must be a static Python float or None, got "
                        f"{type(capacity_factor).__name__}")
    if not capacity_factor > 0 or math.isinf(capacity_factor):
        raise ValueError(f"{fn}: capacity_factor must be a finite number > 0 (or None: never drop), got "
                         f"{capacity_factor}")
    return float(capacity_factor)


def moe_expert_parallel(x: ArrayLike, router_w: ArrayLike, w_gate_up: ArrayLike, w_down: ArrayLike, *, top_k: int,
                        axis_name: str, capacity_factor: float | None = None, fp8: bool = True) -> jax.Array:
    """The expert-parallel MoE layer's per-device body: call it inside `jax.shard_map` over `axis_name`.

    x [..., D]: this device's tokens; router_w [D, E]: the whole router, replicated; w_gate_up [E / n, D, 2F] and
    w_down [E / n, F, D]: this device's experts (device i of the n along axis_name holds experts
    i * E / n ... (i + 1) * E / n - 1, as `P(axis_name)` on their first dimension gives). Returns [..., D] for this
    device's tokens. See `moe` for the math; `capacity_factor` as in this module's docstring."""
    fn = "moe_expert_parallel"
    devices = jax.lax.axis_size(axis_name)
    x, x2, router_w, w_gate_up, w_down, top_k = check_moe_args(fn, x, router_w, w_gate_up, w_down, top_k,
                                                               devices=devices, axis_name=axis_name)
    experts = router_w.shape[1]
    held = experts // devices
    capacity_factor = _check_capacity_factor(fn, capacity_factor)
    tokens, d = x2.shape
    cap = capacity(tokens, top_k, held, devices, capacity_factor)

    # Dispatch: the (token, slot) pairs sorted by expert are sorted by destination device too; a pair's place in
    # its destination's bucket is its rank among the pairs going there.
    weights, expert_ids = route(x2, router_w, top_k)
    order, _ = sort_by_expert(expert_ids.reshape(-1), experts)
    sorted_expert = expert_ids.reshape(-1)[order]
    dest = sorted_expert // held
    per_dest = jnp.bincount(dest, length=devices).astype(jnp.int32)
    rank = jnp.arange(dest.shape[0], dtype=jnp.int32) - (jnp.cumsum(per_dest) - per_dest)[dest]
    slot = jnp.where(rank < cap, dest * cap + rank, devices * cap)  # past the buffer: dropped by mode="drop"
    send = place_rows(dispatch(x2, order, top_k), slot, devices * cap)
    # Each row travels with its combine weight, applied on the expert's device as on one device (`expert_ffn`).
    send_weights = place_rows(permute_rows(weights.reshape(-1, 1), order), slot, devices * cap)
    # Free slots carry the id `held`, one past this device's experts: they sort last and join no group.
    send_ids = jnp.full((devices * cap,), held, jnp.int32).at[slot].set(sorted_expert % held, mode="drop")

    exchange = partial(jax.lax.all_to_all, axis_name=axis_name, split_axis=0, concat_axis=0, tiled=True)
    rows, row_weights, row_ids = exchange(send), exchange(send_weights), exchange(send_ids)
    # (bucket j now holds device j's rows for our experts)
    row_order, group_sizes = sort_by_expert(row_ids, held)
    out = expert_ffn(rows, w_gate_up, w_down, group_sizes, fp8=fp8, gather=(row_order, 1), combine=row_weights)
    back = exchange(out)  # bucket j: our rows' weighted outputs from device j, in the slots we sent them in

    per_pair = pick_rows(back, slot, devices * cap)  # a dropped pair reads zeros
    return sum_slots(per_pair, order, top_k).reshape(*x.shape[:-1], d)


def _placed(x, mesh, axis_name, spec):
    """On an Explicit mesh axis shard_map wants its operands already laid out as in_specs says; on an Auto axis
    shard_map lays them out itself."""
    if dict(zip(mesh.axis_names, mesh.axis_types))[axis_name] == AxisType.Explicit:
        return jax.reshard(x, NamedSharding(mesh, spec))
    return x


def expert_parallel_moe(x: ArrayLike, router_w: ArrayLike, w_gate_up: ArrayLike, w_down: ArrayLike, *, top_k: int,
                        mesh: jax.sharding.Mesh, axis_name: str, capacity_factor: float | None = None,
                        fp8: bool = True) -> jax.Array:
    """`moe` over a device mesh: tokens (x's leading dimensions, flattened) and experts are split over the
    devices of `mesh` axis `axis_name`; the router is replicated. Takes and returns global arrays; any other mesh
    axes replicate the computation."""
    fn = "moe"
    if axis_name not in mesh.axis_names:
        raise ValueError(f"{fn}: axis_name {axis_name!r} is not an axis of the mesh (axes {mesh.axis_names})")
    devices = mesh.shape[axis_name]
    x, x2, router_w, w_gate_up, w_down, top_k = check_moe_args(fn, x, router_w, w_gate_up, w_down, top_k)
    experts, tokens = router_w.shape[1], x2.shape[0]
    if experts % devices:
        raise ValueError(f"{fn}: router_w [D, E] has E = {experts} experts, not a multiple of the {devices} devices "
                         f"of mesh axis {axis_name!r} (each device holds E / devices experts)")
    if tokens % devices:
        raise ValueError(f"{fn}: x {tuple(x.shape)} has {tokens} tokens (its leading dimensions flattened), not a "
                         f"multiple of the {devices} devices of mesh axis {axis_name!r}")
    capacity_factor = _check_capacity_factor(fn, capacity_factor)
    if tokens == 0:  # no token: an empty result, as moe's
        return jnp.zeros(x.shape, x.dtype)
    specs = (P(axis_name), P(), P(axis_name), P(axis_name))
    operands = [_placed(a, mesh, axis_name, s) for a, s in zip((x2, router_w, w_gate_up, w_down), specs)]
    body = partial(moe_expert_parallel, top_k=top_k, axis_name=axis_name, capacity_factor=capacity_factor, fp8=fp8)
    y = jax.shard_map(body, mesh=mesh, in_specs=specs, out_specs=P(axis_name))(*operands)
    return y.reshape(x.shape)


def shard_experts(w: ArrayLike, mesh: jax.sharding.Mesh, axis_name: str) -> jax.Array:
    """Places expert weights [E, ...] as the expert-parallel layer holds them: E / n experts on each device of mesh
    axis `axis_name` (then the layer moves no weights)."""
    return jax.device_put(w, NamedSharding(mesh, P(axis_name)))
