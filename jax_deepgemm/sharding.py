"""Sharding of the primitives under `jax.jit` with sharded operands (the Shardy partitioner, JAX's default).

Choice: `jax.experimental.custom_partitioning`, applied inside each outer primitive's lowering rule around the inner
(per-shard) primitive, with a Shardy `sharding_rule` built per call. Why, rather than an `sdy.sharding_rule`
attribute on the custom call itself:
  * it has to cover both lowerings. On CPU (and any GPU without the kernels) a primitive lowers to the reference,
    dozens of XLA ops that Shardy would partition op by op (gathering whatever it cannot follow through the scans);
    on sm_90 it is one FFI call, which XLA can only split along leading dimensions shared by every operand (the
    batch partitioner): that fits the masked layout but none of the dense ones. custom_partitioning partitions the
    primitive as one unit whatever it lowers to;
  * the partition callback sees the shardings Shardy chose and returns a per-shard program that can do more than
    slice: a psum over a sharded K, group sizes and masks rewritten for a shard of M, K segments shifted for a shard
    of the k-grouped groups;
  * it is applied at lowering time, after vmap/grad/jvp have run on the outer primitive (which has its own rules),
    so custom_partitioning's limits with transformations (it has no batching or JVP rule) never arise.
Costs, accepted: the callback is Python run by XLA at compile time; a program with a partitioned call misses the
persistent compilation cache (custom_partitioning keys it by a Python id); the outer primitives are registered
as needing devices at lowering (`jax._src.dispatch`, private), without which custom_partitioning has no mesh; and
the partition callback decodes XLA's shardings with `jax._src.sharding_impls` (private; see `_decoded_spec`).
Inside shard_map and pmap (manual axes) and on one device, the inner primitive is lowered in place: it is local.

What runs where: a factor (m, n, k, g) that the operands shard is kept when every shard stays a whole problem of
the same family (the conditions in `_Call.shardable`), otherwise it is replicated (XLA then gathers it, which is correct
but slower). Scales follow their data: a_scale [M, kb] with M, 128x128 b_scale [nb, kb] with N in 128-row blocks,
per-row b_scale [N, kb] with N, and every kb with K in 128-column blocks.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import jax.numpy as jnp
from jax import lax
from jax._src import dispatch, sharding_impls  # private: see the module docstring
from jax.experimental.custom_partitioning import ArrayMapping, CompoundFactor, SdyShardingRule, custom_partitioning
from jax.interpreters import mlir
from jax.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec, use_abstract_mesh

from .quantization import BLOCK
from .reference import segment_ends

# Factor names of each operand's dimensions and of the result. "kb" and "nb" are K and N counted in 128 blocks
# (scales); a per-row B scale uses "n" instead of "nb". "gs" (k-grouped group sizes) is always replicated: every
# shard needs all sizes to find where its segments start.
_LAYOUTS = {
    "dense": ((("m", "k"), ("m", "kb"), ("n", "k"), ("nb", "kb"), ("m", "n")), ("m", "n")),
    "contiguous": ((("m", "k"), ("m", "kb"), ("g", "n", "k"), ("g", "nb", "kb"), ("m",)), ("m", "n")),
    "ragged": ((("m", "k"), ("m", "kb"), ("g", "n", "k"), ("g", "nb", "kb"), ("g",)), ("m", "n")),
    "masked": ((("g", "m", "k"), ("g", "m", "kb"), ("g", "n", "k"), ("g", "nb", "kb"), ("g",)), ("g", "m", "n")),
    "k_grouped": ((("m", "k"), ("m", "kb"), ("n", "k"), ("n", "kb"), ("gs",), ("g", "m", "n")), ("g", "m", "n")),
}
# Factors each family can split. Not: the experts of the two M-grouped layouts (any row may use any expert), and the
# k-grouped K (its segments are device data).
_SPLITTABLE = {"dense": "mnk", "contiguous": "mnk", "ragged": "mnk", "masked": "gmnk", "k_grouped": "gmn"}
_BASE = {"kb": "k", "nb": "n"}


def _base(factor: str) -> str:
    """The dimension a factor splits: K's and N's 128-wide blocks split as K and N."""
    return _BASE.get(factor, factor)


class _Call:
    """One call's layout: factor names per operand dimension, factor sizes, and whether B has 128x128 scales."""

    def __init__(self, kind, avals, out_aval):
        operands, self.result = _LAYOUTS[kind]
        operands = operands[: len(avals)]  # without the optional C
        self.kind = kind
        self.sizes = {}
        for names, shape in zip(operands + (self.result,), [a.shape for a in avals] + [out_aval.shape]):
            for f, size in zip(names, shape):
                self.sizes.setdefault(f, size)
        # The layouts name B's scale rows "nb"; a scale with one row per N row is the per-row kind.
        self.block_n = "nb" in self.sizes and self.sizes["nb"] != self.sizes["n"]
        if not self.block_n:
            operands = tuple(tuple("n" if f == "nb" else f for f in names) for names in operands)
        self.operands = operands

    def shardable(self, factor: str, count: int) -> bool:
        """Whether `count` shards of this factor are each a whole problem of the same family."""
        if factor not in _SPLITTABLE[self.kind]:
            return False
        size = self.sizes[factor]
        if factor == "k" or (factor == "n" and self.block_n):
            return size % (BLOCK * count) == 0  # whole 128 blocks, so that the scales split with the data
        if factor == "m" and self.kind == "contiguous":
            return size % (BLOCK * count) == 0  # expert runs stay aligned to 128 rows in every shard
        return size % count == 0

    def unsplittable(self, axis_sizes) -> set[str]:
        """The factors (g, m, n, k) that no single mesh axis splits into whole problems."""
        return {f for f in ("g", "m", "n", "k") if f in self.sizes and not any(self.shardable(f, size)
                                                                              for size in axis_sizes)}

    def sdy_rule(self, axis_sizes) -> SdyShardingRule:
        """How shardings propagate through the call. K (and N with 128x128 scales) is the compound of its 128
        blocks and the 128 elements of a block, when it is a whole number of blocks; only the blocks may be split.
        Otherwise K (N) and its blocks are separate factors that must stay whole. So must a factor that no mesh axis
        (of `axis_sizes`) splits into whole problems: left free, Shardy would split it along part of an axis (a
        sub-axis), which custom_partitioning cannot express (e.g. 2 K blocks of a weight gradient whose tokens are
        split 8 ways)."""
        # (Shardy rejects a compound with a factor of size 1: one block is a plain factor, not splittable anyway.)
        k_blocks = self.sizes["k"] % BLOCK == 0 and self.sizes["k"] > BLOCK
        n_blocks = self.block_n and self.sizes["n"] % BLOCK == 0 and self.sizes["n"] > BLOCK
        compound = {"k": CompoundFactor("kb", "kt")} if k_blocks else {}
        if n_blocks:
            compound["n"] = CompoundFactor("nb", "nt")
        mapping = lambda names: ArrayMapping(*(compound.get(f, f) for f in names))  # noqa: E731
        order: list[str] = []  # factors in order of appearance: Shardy wants the special factors listed in that order
        for names in self.operands + (self.result,):
            for f in names:
                for part in compound.get(f, (f,)):
                    order += [part] if part not in order else []
        used = set(order)
        whole = lambda f: _base(f) in _SPLITTABLE[self.kind] and f not in ("kt", "nt")  # noqa: E731
        unsplittable = self.unsplittable(axis_sizes)
        replicated = {f for f in used if not whole(f) or _base(f) in unsplittable}
        if not k_blocks:
            replicated |= {f for f in ("k", "kb") if f in used}
        if self.block_n and not n_blocks:
            replicated |= {"n", "nb"}
        reduction = tuple(f for f in ("kb",) if f in used and f not in replicated and "k" not in self.result)
        # (typed Any: a type checker would match **sizes against every keyword of SdyShardingRule)
        sizes: dict[str, Any] = {f: BLOCK for f in ("kt", "nt") if f in used}
        return SdyShardingRule(tuple(mapping(n) for n in self.operands), (mapping(self.result),),
                               reduction_factors=reduction,
                               need_replication_factors=tuple(f for f in order if f in replicated),
                               **sizes)

    def factor_axes(self, mesh, specs) -> dict[str, tuple]:
        """The mesh axes of each factor, read from the operands' and result's shardings; factors that cannot be
        split as they are (see `shardable`) or that reuse an axis are dropped (replicated)."""
        found: dict[str, tuple] = {}
        for names, spec in specs:
            for f, entry in zip(names, tuple(spec) + (None,) * (len(names) - len(spec))):
                axes = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
                if axes and _base(f) not in found:
                    found[_base(f)] = axes
        kept: dict[str, tuple] = {}
        used: set[str] = set()
        for f in ("g", "m", "n", "k"):
            axes = found.get(f, ())
            count = math.prod(mesh.shape[a] for a in axes)
            if axes and not used & set(axes) and self.shardable(f, count):
                kept[f] = axes
                used |= set(axes)
        return kept


def _spec(names, axes) -> PartitionSpec:
    return PartitionSpec(*(axes.get(_base(f)) for f in names))


def _local(kind, family, axes, counts, params, *ops):
    """One shard's part of the call: the inner primitive on local operands, with group data made local."""
    ops = list(ops)
    if "m" in axes and kind in ("ragged", "masked"):
        # This shard holds rows lo .. lo+m_local-1: each group's (each mask's) rows are clipped to them.
        m_local = ops[0].shape[-2]
        lo = lax.axis_index(axes["m"]) * m_local
        if kind == "ragged":
            ends = jnp.clip(segment_ends(ops[4], m_local * counts["m"]) - lo, 0, m_local)
            ops[4] = jnp.diff(ends, prepend=0).astype(jnp.int32)
        else:
            ops[4] = jnp.clip(ops[4] - lo, 0, m_local).astype(jnp.int32)
    if "g" in axes and kind == "k_grouped":
        ops = _k_grouped_local_groups(ops, axes["g"], counts["g"])
    if "k" not in axes:
        return family.inner.bind(*ops, **params)
    # K split: float32 partial products summed over the K shards, then C and the output dtype, as unsplit.
    c = ops.pop() if kind == "dense" and len(ops) == 5 else None
    partial_params = {**params, "out_dtype": jnp.float32}
    if "overwrite_c" in params:  # (the partial products take no C: it is added after the psum)
        partial_params["overwrite_c"] = False
    d = lax.psum(family.inner.bind(*ops, **partial_params), axes["k"])
    return (d if c is None else c.astype(jnp.float32) + d).astype(params["out_dtype"])


def _local_without_mesh(*args):
    """_local traced with no mesh in context: XLA runs the partition callback while the caller's mesh may still be
    set (jax.set_mesh with explicit axes), which would give the per-shard ops sharding types of the whole mesh."""
    with use_abstract_mesh(AbstractMesh((), ())):
        return _local(*args)


def _k_grouped_local_groups(ops, g_axes, count):
    """This shard's groups g0 .. g0+G_local-1 of a k-grouped call: A, B and their scales rotated along K so that the
    first of them starts at K = 0 (rounded down to a 128 block, so that the scales move with the data and every K
    block keeps its group), and the sizes of just those groups. Segments that are whole 128 blocks (the contract)
    give exactly the unsplit result."""
    a, a_scale, b, b_scale, group_sizes, *c = ops
    g_local = group_sizes.shape[0] // count
    g0 = lax.axis_index(g_axes) * g_local
    ends = segment_ends(group_sizes, a.shape[1])
    start = jnp.where(g0 > 0, ends[jnp.maximum(g0 - 1, 0)], 0) // BLOCK * BLOCK
    local_ends = lax.dynamic_slice(ends, (g0,), (g_local,)) - start
    rotate = lambda x, per: jnp.roll(x, -(start // per), axis=1)  # noqa: E731
    return [rotate(a, 1), rotate(a_scale, BLOCK), rotate(b, 1), rotate(b_scale, BLOCK),
            jnp.diff(local_ends, prepend=0).astype(jnp.int32), *c]


def _partitioned(kind, family, avals, out_aval, params, axis_sizes):
    call = _Call(kind, avals, out_aval)

    def partition(mesh, arg_shapes, result_shape):
        specs = [(names, _decoded_spec(s.sharding, mesh)) for names, s in zip(call.operands, arg_shapes)]
        axes = call.factor_axes(mesh, specs + [(call.result, _decoded_spec(result_shape.sharding, mesh))])
        counts = {f: math.prod(mesh.shape[a] for a in names) for f, names in axes.items()}
        arg_shardings = tuple(NamedSharding(mesh, _spec(names, axes)) for names in call.operands)
        result = NamedSharding(mesh, _spec(call.result, axes))
        return mesh, partial(_local_without_mesh, kind, family, axes, counts, params), result, arg_shardings

    fn = custom_partitioning(lambda *ops: family.inner.bind(*ops, **params))
    fn.def_partition(partition, sharding_rule=call.sdy_rule(axis_sizes), decode_shardings=False)  # _decoded_spec
    return fn


def _decoded_spec(sharding, mesh) -> PartitionSpec:
    """An operand's (result's) sharding as the mesh's PartitionSpec. The partitioner passes XLA's shardings as they
    are (decode_shardings=False): one that splits a dimension along part of a mesh axis (a sub-axis: Shardy
    propagates, e.g., tokens split 4 ways into the 2 K blocks of a weight gradient's scales, or B's N split 4 ways
    into its 2 blocks of scales) has no PartitionSpec, and decoding it in JAX would fail the compilation. Such an
    operand counts as unsplit here (the other operands' shardings choose the call's), and XLA reshards it to the
    call's shardings."""
    if sharding is None:
        return PartitionSpec()
    if isinstance(sharding, NamedSharding):
        return sharding.spec
    try:
        return sharding_impls.parse_flatten_op_sharding(sharding._hlo_sharding, mesh)[0]  # private: see the top
    except Exception:  # noqa: BLE001  (JAX raises several kinds for what a PartitionSpec cannot hold)
        return PartitionSpec()


def _sharded_program(ctx) -> bool:
    """A jit program over several devices with a mesh; not shard_map/pmap (their axes are manual: calls are local)."""
    context = ctx.module_context.axis_context
    return (isinstance(context, sharding_impls.ShardingContext) and context.num_devices > 1
            and context.abstract_mesh is not None and not context.abstract_mesh.empty)


def _kept_whole(op, names, unsplittable, mesh):
    """op with its dimensions of unsplittable factors gathered, the others left to the partitioner. Operands can
    arrive split along part of a mesh axis (Shardy propagates, e.g., 8-way split tokens into the 2 K blocks of a
    weight gradient's scales), which custom_partitioning cannot take in; pinning those dimensions makes Shardy
    gather them first."""
    if not any(_base(f) in unsplittable for f in names):
        return op
    spec = PartitionSpec(*(None if _base(f) in unsplittable else PartitionSpec.UNCONSTRAINED for f in names))
    auto = mesh.update_axis_types({a: AxisType.Auto for a in mesh.axis_names})  # as the partitioned call runs
    return lax.with_sharding_constraint(op, NamedSharding(auto, spec))


def _lowering(family):
    local = mlir.lower_fun(lambda *ops, **params: family.inner.bind(*ops, **params), multiple_results=False)

    def rule(ctx, *args, **params):
        if not _sharded_program(ctx):
            return local(ctx, *args, **params)
        mesh = ctx.module_context.axis_context.abstract_mesh
        axis_sizes = tuple(mesh.shape.values())
        call = _Call(family.kind, ctx.avals_in, ctx.avals_out[0])
        unsplittable = call.unsplittable(axis_sizes)
        partitioned = _partitioned(family.kind, family, ctx.avals_in, ctx.avals_out[0], params, axis_sizes)

        def program(*ops):
            return partitioned(*(_kept_whole(op, names, unsplittable, mesh) for op, names in zip(ops, call.operands)))

        return mlir.lower_fun(program, multiple_results=False)(ctx, *args)

    return rule


def result_spec(kind, avals, out_aval, mesh) -> PartitionSpec:
    """The sharding a partitioned call gives its result, from the operands' sharding types (explicit axes)."""
    call = _Call(kind, avals, out_aval)
    specs = [(names, aval.sharding.spec) for names, aval in zip(call.operands, avals)]
    return _spec(call.result, call.factor_axes(mesh, specs))


def register(families):
    for family in families:
        mlir.register_lowering(family.primitive, _lowering(family))
        dispatch.prim_requires_devices_during_lowering.add(family.primitive)
