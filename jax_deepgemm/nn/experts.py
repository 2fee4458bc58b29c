"""The pieces of an MoE layer shared by the single-device and the expert-parallel paths: argument checks, top-k
routing, and the SwiGLU expert FFN over rows sorted by expert with the weighted combine of each token's top-k
outputs."""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp

from .._checks import as_array
from .._permutation import inverse_permutation, sum_token_slots
from .._types import ArrayLike, DTypeLike
from ..differentiable import dispatched_ragged_dot, moe_ffn, ragged_dot
from ..primitives import auto_axes_if_explicit, operand_spec
from ..swiglu import swiglu
from ._validate import floating, static_int


def check_moe_args(fn: str, x, router_w, w_gate_up, w_down, top_k, *, devices: int = 1,
                   axis_name=None) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array, jax.Array, int]:
    """Validates the MoE operands; returns them as arrays, x both as given ([..., D]) and flattened to [T, D] (so
    x, x2, ...), and top_k as an int.

    Inside the expert-parallel body (`devices` > 1 along `axis_name`) the expert weights passed are this device's
    E / devices experts; the router always scores all E experts."""
    x = floating(fn, "x", x, allow_empty=True)  # (no token is a layer's valid input; D = 0 fails on router_w)
    if x.ndim < 1:
        raise ValueError(f"{fn}: x must be [..., D], got a scalar")
    d = x.shape[-1]
    router_w = floating(fn, "router_w", router_w, (d, "E"), described=f"[D, E] with D = x.shape[-1] = {d}")
    experts = router_w.shape[1]
    if not isinstance(experts, int):  # (a shape-polymorphic export: top_k and the dispatch need the count)
        raise ValueError(f"{fn}: the expert count E (router_w's last dimension) must be static, got the symbolic "
                         f"{experts}; token counts may be symbolic")
    if experts % devices:
        raise ValueError(f"{fn}: router_w [D, E] has E = {experts} experts, not a multiple of the {devices} devices "
                         f"of axis {axis_name!r} (each device holds E / devices experts)")
    held = experts // devices
    w_gate_up, w_down = _check_expert_weights(fn, d, w_gate_up, w_down, held, "E" if devices == 1 else "E / devices")
    top_k = static_int(fn, "top_k", top_k, 1, experts)
    return x, x.reshape(-1, d), router_w, w_gate_up, w_down, top_k


def _check_expert_weights(fn: str, d: int, w_gate_up, w_down, held: int | str,
                          held_text: str = "E") -> tuple[jax.Array, jax.Array]:
    """w_gate_up [held, D, 2F] (2F even) and w_down [held, F, D] as float arrays; `held` an int or "E" (any)."""
    wanted = f"{held_text} = {held}, " if isinstance(held, int) else ""
    w_gate_up = floating(fn, "w_gate_up", w_gate_up, (held, d, "2F"),
                         described=f"[{held_text}, D, 2F] with {wanted}D = {d}")
    if w_gate_up.shape[2] % 2:
        raise ValueError(f"{fn}: w_gate_up has shape {tuple(w_gate_up.shape)}; its last dimension 2F (gate and up "
                         "projections side by side) must be even")
    held, f = w_gate_up.shape[0], w_gate_up.shape[2] // 2
    w_down = floating(fn, "w_down", w_down, (held, f, d),
                      described=f"[{held_text}, F, D] with {held_text} = {held}, F = {f}, D = {d}")
    return w_gate_up, w_down


def _integer_vector(fn: str, name: str, v, length: int, described: str) -> jax.Array:
    v = as_array(fn, name, v)
    if not jnp.issubdtype(v.dtype, jnp.integer):
        raise TypeError(f"{fn}: {name} must be an integer array, got {v.dtype}")
    if v.shape != (length,):
        raise ValueError(f"{fn}: {name} has shape {tuple(v.shape)}; expected [{length}] = {described}")
    return v


def route(x: ArrayLike, router_w: ArrayLike, top_k: int) -> tuple[jax.Array, jax.Array]:
    """Top-k routing: x [T, D], router_w [D, E] -> (weights [T, top_k] float32, expert_ids [T, top_k] int32).

    Softmax over the router logits in float32, the top_k experts of each token, their probabilities renormalised
    to sum to 1. The router runs in float32 at full precision (it is E columns wide, so cheap): a reduced-precision
    product could flip near-tied expert choices between two runs that batch the same tokens differently. On the GPU
    the product is XLA's BF16_BF16_F32_X6 algorithm (each operand split into three bf16 parts, six bf16 products of
    them summed in float32; for bf16 x every product it needs is among them, exactly), on the H200 both faster and
    closer to a float64 product than Precision.HIGHEST (router_dot.py in benchmarks/experiments); its gradients take
    the same algorithm."""
    x = floating("route", "x", x, ("T", "D"))
    d = x.shape[1]
    router_w = floating("route", "router_w", router_w, (d, "E"), described=f"[D, E] with D = x.shape[1] = {d}")
    top_k = static_int("route", "top_k", top_k, 1, router_w.shape[1])
    logits = jnp.dot(x.astype(jnp.float32), router_w.astype(jnp.float32),
                     precision=jax.lax.DotAlgorithmPreset.BF16_BF16_F32_X6)
    weights, expert_ids = jax.lax.top_k(jax.nn.softmax(logits, axis=-1), top_k)
    return weights / jnp.sum(weights, axis=-1, keepdims=True), expert_ids.astype(jnp.int32)


def same_spec_as_first(x, *_, **__):
    """The result's sharding for layers whose result has their first operand's shape: that operand's."""
    spec = operand_spec(x)
    return None if spec is None else jax.sharding.PartitionSpec(*spec)


@auto_axes_if_explicit(same_spec_as_first)
def expert_ffn(rows: ArrayLike, w_gate_up: ArrayLike, w_down: ArrayLike, group_sizes: ArrayLike, *, fp8: bool = True,
               gather: tuple[ArrayLike, int] | None = None, combine: ArrayLike | None = None) -> jax.Array:
    """SwiGLU FFN of each expert over rows sorted by expert: rows [M, D], group_sizes [E] -> [M, D] in rows.dtype.

    Expert g owns the next group_sizes[g] rows; rows past sum(group_sizes) come out as zeros. fp8=True uses the
    FP8 `ragged_dot` (FP8 forward and backward, weights quantized from their stored dtype); fp8=False is the same
    math with jax.lax.ragged_dot in rows.dtype (the baseline the FP8 layer is compared with).

    gather=(order, top_k): the FFN of rows[order // top_k] (`dispatch`: `order` a permutation of the T * top_k
    (token, slot) pairs of rows [T, D]), the same values; with fp8 the gather is folded into the first GEMM's FP8
    operands instead of copying the gathered rows (`dispatched_ragged_dot`).

    combine=weights [T, top_k] (with gather): the MoE combine, [T, D] with row t = sum over its slots j of
    weights[t, j] * the FFN of (t, j), summed in float32 and rounded once to rows.dtype. The weights scale the SwiGLU
    activations (computed in float32) before the down projection, the same product, so that the combine is the
    transpose of the dispatch: with fp8 the down projection's backward quantizes the T rows of the output gradient,
    not T * top_k weighted copies (`combined_ragged_dot`); the first GEMM and the SwiGLU are one differentiable step
    (`dispatched_swiglu`), whose backward forms the SwiGLU's gradients and their FP8 quantization in one pass; and
    the two are one custom VJP (`moe_ffn`), whose forward forms h and its FP8 quantization in one pass."""
    fn = "expert_ffn"
    rows = floating(fn, "rows", rows, ("M", "D"))
    w_gate_up, w_down = _check_expert_weights(fn, rows.shape[1], w_gate_up, w_down, "E")
    experts = w_gate_up.shape[0]
    group_sizes = _integer_vector(fn, "group_sizes", group_sizes, experts, "[E] (w_gate_up's E)")
    if gather is not None:
        if not isinstance(gather, (tuple, list)) or len(gather) != 2:
            raise TypeError(f"{fn}: gather must be a pair (order, top_k), got {type(gather).__name__}")
        order, top_k = gather
        top_k = static_int(fn, "gather's top_k", top_k, 1)
        order = _integer_vector(fn, "gather's order", order, rows.shape[0] * top_k, "[T * top_k] (rows [T, D])")
        gather = (order, top_k)
    if fp8:
        def grouped(lhs, rhs):
            return ragged_dot(lhs, rhs, group_sizes, preferred_element_type=lhs.dtype)
    else:
        def grouped(lhs, rhs):
            return jax.lax.ragged_dot(lhs, rhs.astype(lhs.dtype), group_sizes, preferred_element_type=lhs.dtype)
    if gather is None and combine is not None:
        raise ValueError("expert_ffn: combine needs gather=(order, top_k): the weights are given per (token, slot)")
    if combine is None:
        if gather is None:
            gate_up = grouped(rows, w_gate_up)
        elif fp8:
            gate_up = dispatched_ragged_dot(rows, *gather, w_gate_up, group_sizes)
        else:
            gate_up = grouped(dispatch(rows, *gather), w_gate_up)
        gate, up = jnp.split(gate_up, 2, axis=-1)
        return grouped(jax.nn.silu(gate) * up, w_down)
    assert gather is not None  # (combine without gather was refused above)
    order, top_k = gather
    if jnp.shape(combine) != (rows.shape[0], top_k):
        raise ValueError(f"expert_ffn: combine must be the weights [T, top_k] = [{rows.shape[0]}, {top_k}] of rows "
                         f"[T, D] and gather's top_k, got shape {jnp.shape(combine)}")
    # each row's weight, sorted by expert as the rows are
    row_weights = permute_rows(jnp.reshape(combine, (-1, 1)).astype(jnp.float32), order)[:, 0]
    if fp8:
        return moe_ffn(rows, order, top_k, w_gate_up, w_down, group_sizes, row_weights)
    h = swiglu(grouped(dispatch(rows, order, top_k), w_gate_up), row_weights, rows.dtype)
    return sum_slots(grouped(h, w_down), order, top_k)


def sort_by_expert(expert_ids, experts: int):
    """expert_ids [N] -> (order, group_sizes [experts]): `order` sorts the entries by expert, keeping their order
    within an expert (so a token's place in its expert's run does not depend on how the tokens were batched);
    ids outside [0, experts) (free slots) sort last, in their order, and count in no group.

    Up to N * (experts + 224) = 2^24 a counting sort: an entry's place is its expert's first place plus the entries
    of its expert before it, counted in blocks of 128 (in its block one comparison with each entry before it, reduced
    as XLA fuses it; over the blocks before, a cumulative sum of per-block counts), then one scatter of the entries'
    indices: O(N * (128 + experts)) work, no [N, experts] array. Past that limit, or with N symbolic, a stable argsort
    (XLA ran CUB's radix sort at 524288 entries, and by the times from 32768 on). On an H200 (2026-12-01,
    benchmarks/NOTES.md 132), argsort / counting sort in us: N = 16384 (the MoE step's) 49.7 / 12.8 with 16 experts,
    49.9 / 18.0 with 256; N = 65536 37.9 / 27.5 with 16, 38.4 / 47.3 with 256; N = 131072 39.6 / 43.9 with 16. The
    counting sort's time fits 8 us + N * (experts + 220) * 1.26 ps."""
    n = expert_ids.shape[0]
    bucket = jnp.where((expert_ids >= 0) & (expert_ids < experts), expert_ids, experts).astype(jnp.int32)
    if not isinstance(n, int) or n * (experts + 224) > _COUNTING_SORT_LIMIT:  # (not int: a shape-polymorphic export)
        sizes = jnp.bincount(bucket, length=experts + 1)[:experts].astype(jnp.int32)
        return jnp.argsort(bucket, stable=True).astype(jnp.int32), sizes
    blocks = -(-n // _SORT_BLOCK)
    # (padding: a bucket of its own, after every entry, counted nowhere)
    b = jnp.pad(bucket, (0, blocks * _SORT_BLOCK - n), constant_values=experts + 1).reshape(blocks, _SORT_BLOCK)
    earlier = jnp.tril(jnp.ones((_SORT_BLOCK, _SORT_BLOCK), bool), -1)  # [i, j]: j before i
    in_block = jnp.sum((b[:, :, None] == b[:, None, :]) & earlier[None], axis=2, dtype=jnp.int32)
    per_block = jnp.sum(b[:, :, None] == jnp.arange(experts + 1, dtype=jnp.int32)[None, None], axis=1, dtype=jnp.int32)
    before_block = jnp.cumsum(per_block, axis=0, dtype=jnp.int32) - per_block  # [blocks, experts + 1]
    counts = jnp.sum(per_block, axis=0, dtype=jnp.int32)
    first = jnp.cumsum(counts, dtype=jnp.int32) - counts
    kept = jnp.minimum(b, experts)  # (the padding's bucket read as the last one's; its places are cut off below)
    place = (first[kept] + jnp.take_along_axis(before_block, kept, axis=1) + in_block).reshape(-1)[:n]
    order = jnp.zeros((n,), jnp.int32).at[place].set(jnp.arange(n, dtype=jnp.int32), unique_indices=True)
    return order, counts[:experts]


_SORT_BLOCK = 128  # sort_by_expert's block: 128 comparisons per entry
_COUNTING_SORT_LIMIT = 1 << 24  # sort_by_expert's counting sort up to N * (experts + 224) = this


# Row permutations and the dispatch gather, with gradients that gather too (see _permutation.py: scattering rows
# took ~10 ms of a 19 ms MoE training step, benchmarks/NOTES.md 98).

@jax.custom_vjp
def permute_rows(x, perm):
    """x[perm] for a permutation perm of x's rows."""
    return x[perm]


def _permute_rows_fwd(x, perm):
    return x[perm], perm


def _permute_rows_bwd(perm, g):
    return g[inverse_permutation(perm)], None


permute_rows.defvjp(_permute_rows_fwd, _permute_rows_bwd)


@partial(jax.custom_vjp, nondiff_argnums=(2,))
def dispatch(x, order, top_k: int):
    """x [T, D], order a permutation of the T * top_k (token, slot) pairs -> x[order // top_k] [T * top_k, D]: each
    token's row once per slot, in the pairs' order. The gradient sums each token's top_k rows (`sum_slots`)."""
    return x[order // top_k]


def _dispatch_fwd(x, order, top_k):
    return x[order // top_k], order


def _dispatch_bwd(top_k, order, g):
    return sum_token_slots(g, order, top_k), None


dispatch.defvjp(_dispatch_fwd, _dispatch_bwd)


@partial(jax.custom_vjp, nondiff_argnums=(2,))
def sum_slots(pair_rows, order, top_k: int):
    """The transpose of `dispatch`: pair_rows [T * top_k, D] in `order`'s order -> [T, D], each token's top_k rows
    summed in float32, rounded once. The gradient is the dispatch of the output's gradient."""
    return sum_token_slots(pair_rows, order, top_k)


def _sum_slots_fwd(pair_rows, order, top_k):
    return sum_token_slots(pair_rows, order, top_k), order


def _sum_slots_bwd(top_k, order, g):
    return g[order // top_k], None


sum_slots.defvjp(_sum_slots_fwd, _sum_slots_bwd)


# Rows placed into slots and read back from them (the expert-parallel send and receive buffers): `slot` holds
# distinct slots, or slots >= the table's rows for rows that are dropped. Each is the other's transpose.

def _place(rows, slot, num_slots: int):
    """[P, D] -> [num_slots, D]: row i at slot[i] (dropped when slot[i] >= num_slots), zeros in the other slots."""
    p = rows.shape[0]
    source = jnp.full((num_slots,), p, slot.dtype).at[slot].set(jnp.arange(p, dtype=slot.dtype), mode="drop")
    taken = source < p
    return jnp.where(taken[:, None], rows[jnp.where(taken, source, 0)], jnp.zeros((), rows.dtype))


def _pick(table, slot):
    """[S, D] -> [P, D]: row i is table[slot[i]], zeros where slot[i] >= S."""
    return table.at[slot].get(mode="fill", fill_value=0)


@partial(jax.custom_vjp, nondiff_argnums=(2,))
def place_rows(rows, slot, num_slots: int):
    """_place(rows, slot, num_slots)."""
    return _place(rows, slot, num_slots)


def _place_rows_fwd(rows, slot, num_slots):
    return _place(rows, slot, num_slots), slot


def _place_rows_bwd(num_slots, slot, g):
    return _pick(g, slot), None


place_rows.defvjp(_place_rows_fwd, _place_rows_bwd)


@partial(jax.custom_vjp, nondiff_argnums=(2,))
def pick_rows(table, slot, num_slots: int):
    """_pick(table, slot); num_slots = table.shape[0] (what the gradient's table has)."""
    return _pick(table, slot)


def _pick_rows_fwd(table, slot, num_slots):
    return _pick(table, slot), slot


def _pick_rows_bwd(num_slots, slot, g):
    return _place(g, slot, num_slots), None


pick_rows.defvjp(_pick_rows_fwd, _pick_rows_bwd)


def init_moe_weights(key: ArrayLike, features: int, intermediate: int, num_experts: int,
                     dtype: DTypeLike = jnp.float32) -> tuple[jax.Array, jax.Array, jax.Array]:
    """(router_w [D, E], w_gate_up [E, D, 2F], w_down [E, F, D]) drawn from N(0, 1 / fan_in): unit-variance inputs
    give unit-variance router logits and expert activations."""
    k_router, k_up, k_down = jax.random.split(key, 3)
    d, f, e = features, intermediate, num_experts

    def normal(k, shape, fan_in):
        return (jax.random.normal(k, shape, jnp.float32) / math.sqrt(fan_in)).astype(dtype)

    return normal(k_router, (d, e), d), normal(k_up, (e, d, 2 * f), d), normal(k_down, (e, f, d), f)
