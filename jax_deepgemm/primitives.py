"""One JAX primitive per kernel family, with its abstract eval, lowerings, JVP and batching rule.

Each family is a pair of primitives:
  outer  what the public functions bind: abstract eval (shape, dtype, varying manual axes), JVP, batching rule
         (`batching.py`), and one lowering for every platform that partitions the call when the program is sharded
         (`sharding.py`) and otherwise lowers the inner primitive in place;
  inner  the per-shard computation, only ever created inside that lowering: on CUDA it asks `runtime.use_kernels`
         and emits the FFI call of `kernels.py` (sm_90) or the reference; every other platform lowers to the
         reference (`reference.py`), so CPU runs exercise the very same primitives and rules as the GPU.

Operands are positional and already normalised by the public functions (see `reference.py`); an optional `c`
is always the last operand, and its presence is visible from the operand count. The families that take `c` (dense,
k-grouped) have the parameter `overwrite_c` (default False): D written into c's buffer, which only the CUDA lowering
acts on (an FFI input-output alias; XLA copies c first where it is still needed).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial, wraps
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import Primitive
from jax.interpreters import ad, mlir, xla
from jax.sharding import NamedSharding, PartitionSpec

from . import kernels, reference, runtime


@dataclass(frozen=True)
class Family:
    kind: str  # the layout's name in sharding.py
    primitive: Primitive  # outer
    inner: Primitive
    reference: Callable
    kernel: Callable  # the CUDA path (kernels.py)

    def bind(self, *operands, **params):
        operands = match_vma(*operands)
        mesh = jax.sharding.get_abstract_mesh()
        if mesh.explicit_axes:
            # Explicit sharding types (jax.make_mesh's default axes under jax.set_mesh): the call runs with those
            # axes made Auto, partitioned like any sharded jit (sharding.py), and its result is typed with the
            # sharding that the partitioning gives it. (Only those: inside a shard_map over some of the mesh's axes,
            # its Manual axes stay manual.)
            avals = [jax.typeof(x) for x in operands]
            spec = sharding.result_spec(self.kind, avals, self.primitive.abstract_eval(*avals, **params)[0], mesh)
            with jax.disable_jit(False):  # (see _bind_with_auto_axes)
                return _bind_with_auto_axes(self.primitive, tuple(sorted(params.items())), tuple(mesh.explicit_axes),
                                            spec, *operands)
        return self.primitive.bind(*operands, **params)


@partial(jax.jit, static_argnums=(0, 1, 2, 3), inline=True)
def _bind_with_auto_axes(primitive: Primitive, params: tuple, explicit: tuple, spec, *operands):
    """primitive bound with the `explicit` axes made Auto, its result typed `spec`. The jit (inlined into any program
    that traces it) makes an eager shard_map over the mesh's other axes trace the region whole: op by op, it refuses
    auto_axes."""
    return jax.sharding.auto_axes(partial(primitive.bind, **dict(params)), axes=explicit, out_sharding=spec)(*operands)


# ---- Explicit mesh axes around whole differentiable ops ----

def operand_spec(x) -> tuple | None:
    """x's sharding spec, one entry per dimension (None: not split); None when x is not an array."""
    if isinstance(x, np.ndarray):
        return (None,) * x.ndim
    if not isinstance(x, jax.Array):
        return None
    spec = tuple(jax.typeof(x).sharding.spec)
    return spec + (None,) * (x.ndim - len(spec))


def distinct_axes(*entries) -> PartitionSpec:
    """A result's spec from its dimensions' operand entries: a mesh axis already used by an earlier dimension leaves
    the later one unsplit (a result splits each axis once)."""
    used: set[str] = set()
    out = []
    for entry in entries:
        names = set(entry if isinstance(entry, tuple) else () if entry is None else (entry,))
        out.append(None if names & used else entry)
        used |= names
    return PartitionSpec(*out)


def auto_axes_if_explicit(result_spec: Callable):
    """Decorates a differentiable op or layer: under Explicit mesh axes (jax.make_mesh's default, with
    jax.set_mesh) it runs with those axes made Auto, partitioned like any sharded jit, and its result is typed
    `result_spec(*args, **kwargs)` (a PartitionSpec from the operands' types; None when it cannot say, e.g. for
    arguments that are not arrays, which the op then reports). Inside, its custom VJPs and jnp helpers need no
    sharding rules of their own: custom_vjp wants each cotangent typed exactly as its operand, sharding included,
    and jnp comparisons or gathers of two split index arrays refuse to guess a result's sharding. auto_axes types
    the gradients as the operands. Python values (static arguments, dtypes) stay out of the traced operands."""
    def decorate(op):
        @wraps(op)
        def run(*args, **kwargs):
            mesh = jax.sharding.get_abstract_mesh()
            spec = result_spec(*args, **kwargs) if mesh.explicit_axes else None
            if spec is None:
                return op(*args, **kwargs)
            leaves, tree = jax.tree.flatten((args, kwargs))
            traced = [isinstance(leaf, (jax.Array, np.ndarray)) for leaf in leaves]
            arrays = [leaf for leaf, t in zip(leaves, traced) if t]
            statics = tuple(_TRACED if t else leaf for leaf, t in zip(leaves, traced))
            if mesh.manual_axes:
                # (jitted where its Python arguments can key the jit's cache; a set, say, cannot)
                region = _auto_axes_in_shard_map_jitted if _hashable(statics) else _auto_axes_in_shard_map
                with jax.disable_jit(False):  # (see _auto_axes_in_shard_map)
                    return region(op, tuple(mesh.explicit_axes), spec, tree, statics, *arrays)
            return jax.sharding.auto_axes(partial(_with_arrays, op, tree, statics), axes=tuple(mesh.explicit_axes),
                                          out_sharding=spec)(*arrays)
        return run
    return decorate


_TRACED = object()  # an operand's place among an op's arguments, in `statics` below


def _with_arrays(op: Callable, tree, statics: tuple, *arrays):
    """op called with its arguments rebuilt: the static ones from `statics`, the arrays in the _TRACED places."""
    given = iter(arrays)
    args, kwargs = jax.tree.unflatten(tree, [next(given) if leaf is _TRACED else leaf for leaf in statics])
    return op(*args, **kwargs)


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _auto_axes_in_shard_map(op: Callable, explicit: tuple, spec, tree, statics: tuple, *arrays):
    """auto_axes inside a shard_map over some of the mesh's axes, the others Explicit. The gradient is one custom
    VJP outside the Auto region, whose backward re-runs op's forward and VJP inside one (typing the gradients as
    the operands) from the operands alone: residuals made inside the region would come back, when a gradient is
    taken outside the shard_map, typed on the outer mesh into the region's, which JAX refuses; operands enter the
    region through auto_axes. In the compiled program XLA drops the backward's dead forward product and merges what
    it re-runs (the operands' quantization, a layer's activations) with the forward's (tests/test_sharding.py counts
    the products on the CPU). Its jit (`_auto_axes_in_shard_map_jitted`, inlined into any program that traces it)
    makes an eager shard_map trace the region whole: op by op, it refuses auto_axes."""
    fn = partial(_with_arrays, op, tree, statics)
    differentiable = [i for i, a in enumerate(arrays) if jnp.issubdtype(a.dtype, jnp.inexact)]

    def fn_of_differentiable(arrays, *chosen):
        given = list(arrays)
        for i, x in zip(differentiable, chosen):
            given[i] = x
        return fn(*given)

    @jax.custom_vjp
    def call(*arrays):
        return jax.sharding.auto_axes(fn, axes=explicit, out_sharding=spec)(*arrays)

    def call_fwd(*arrays):
        return call(*arrays), arrays

    def call_bwd(arrays, cotangent):
        def grads(cotangent, *arrays):
            _, vjp = jax.vjp(partial(fn_of_differentiable, arrays), *(arrays[i] for i in differentiable))
            return vjp(cotangent)
        specs = tuple(jax.typeof(arrays[i]).sharding.spec for i in differentiable)
        found = iter(jax.sharding.auto_axes(grads, axes=explicit, out_sharding=specs)(cotangent, *arrays))
        return tuple(next(found) if i in differentiable else None for i in range(len(arrays)))

    call.defvjp(call_fwd, call_bwd)
    return call(*arrays)


_auto_axes_in_shard_map_jitted = jax.jit(_auto_axes_in_shard_map, static_argnums=(0, 1, 2, 3, 4), inline=True)


# ---- varying manual axes (shard_map with check_vma=True) ----

def varying_axes(aval) -> frozenset:
    """The manual mesh axes over which a value of this type may differ between shards (empty outside shard_map)."""
    mat = getattr(aval, "mat", None)  # jax 0.11: aval.mat.varying; older releases: aval.vma
    return frozenset(getattr(mat, "varying", None) or getattr(aval, "vma", None) or ())


def match_vma(*xs):
    """Every x made varying over the union of the axes the xs vary over, as jax.lax's own primitives do before
    binding. Besides typing the result, this is what makes gradients of replicated operands right: the transpose
    of the cast is the psum that adds up the per-shard cotangents (custom_vjp rules rely on it too)."""
    have = [varying_axes(jax.typeof(x)) for x in xs]
    vma = frozenset().union(*have)
    if all(h == vma for h in have):
        return xs
    order = sorted(vma, key=str)
    return tuple(lax.pcast(x, tuple(a for a in order if a not in h), to="varying") for x, h in zip(xs, have))


def _shaped(avals, shape, dtype):
    """The output aval: a replicated NamedSharding on the operands' mesh (the default of jax.lax's primitives on
    Auto/Manual meshes) and the union of the operands' varying manual axes."""
    mesh = next((a.sharding.mesh for a in avals if not a.sharding.mesh.empty), jax.sharding.get_abstract_mesh())
    vma = frozenset().union(*(varying_axes(a) for a in avals))
    out = jax.core.ShapedArray(tuple(shape), jnp.dtype(dtype), sharding=NamedSharding(mesh, PartitionSpec()))
    if vma:
        mat = out.manual_axis_type.update(varying=vma)
        out = out.update(manual_axis_type=mat)
    return out


# ---- lowering ----

def _cuda_lowering(ref: Callable, kernel: Callable):
    reference_rule = mlir.lower_fun(ref, multiple_results=False)
    kernel_rule = mlir.lower_fun(kernel, multiple_results=False)

    def rule(ctx, *args, **params):
        if runtime.use_kernels(ctx.avals_in):
            return kernel_rule(ctx, *args, **params)
        return reference_rule(ctx, *args, **params)

    return rule


def _jvp_via_reference(prim: Primitive, ref: Callable):
    """Primal through the primitive, tangent through the reference's JVP (linear, hence transposable: `grad`
    of the raw GEMMs works everywhere). The FP8 backward passes of fp8_dot / ragged_dot are custom VJPs."""

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        tangents = [ad.instantiate_zeros(t) for t in tangents]
        _, t_out = jax.jvp(partial(ref, **params), tuple(primals), tuple(tangents))
        return out, t_out

    return jvp


def no_derivative(prim: Primitive):
    """The JVP rule of a quantization primitive: there is none to give. Only the FP8 custom VJPs' forward and backward
    passes bind these, so only a second derivative (grad of grad, a Hessian-vector product) asks for one; the JVP of
    a rounding to FP8 is zero almost everywhere, and tangents of FP8 residuals would be FP8 too (448 at most)."""

    def jvp(primals, tangents, **params):  # (a TypeError, as JAX's own refusal of forward mode through a custom VJP)
        raise TypeError(
            f"jax_deepgemm: {prim.name} has no derivative. fp8_dot, ragged_dot and the MoE layer are differentiable "
            "once: their FP8 backward passes (custom VJPs) quantize and keep FP8 residuals; second derivatives (grad "
            "of grad, Hessian-vector products) are not supported. The raw GEMMs are differentiable any number of "
            "times (their JVP is the reference's).")

    return jvp


def _define(kind: str, name: str, shape_rule: Callable, ref: Callable, kernel: Callable) -> Family:
    def abstract_eval(*avals, **params):
        return _shaped(avals, *shape_rule(*avals, **params))

    inner = Primitive(name + "_local")
    inner.def_impl(partial(xla.apply_primitive, inner))
    inner.def_abstract_eval(abstract_eval)
    mlir.register_lowering(inner, mlir.lower_fun(ref, multiple_results=False))
    mlir.register_lowering(inner, _cuda_lowering(ref, kernel), platform="cuda")

    prim = Primitive(name)
    prim.def_impl(partial(xla.apply_primitive, prim))
    prim.def_abstract_eval(abstract_eval)
    ad.primitive_jvps[prim] = _jvp_via_reference(prim, ref)
    return Family(kind, prim, inner, ref, kernel)


# ---- output shape and dtype from the (already validated) operands ----

def _dense_shape(a, a_scale, b, b_scale, *c, out_dtype, overwrite_c=False):
    return (a.shape[0], b.shape[0]), out_dtype


def _m_grouped_shape(a, a_scale, b, b_scale, groups, *, out_dtype):
    return (a.shape[0], b.shape[1]), out_dtype


def _masked_shape(a, a_scale, b, b_scale, masked_m, *, expected_m, out_dtype):
    return (a.shape[0], a.shape[1], b.shape[1]), out_dtype


def _k_grouped_shape(a, a_scale, b, b_scale, group_sizes, *c, out_dtype, overwrite_c=False):
    return (group_sizes.shape[0], a.shape[0], b.shape[0]), out_dtype


fp8_gemm = _define("dense", "jax_deepgemm_fp8_gemm", _dense_shape, reference.fp8_gemm_nt, kernels.fp8_gemm_nt)
m_grouped_contiguous = _define("contiguous", "jax_deepgemm_m_grouped_contiguous", _m_grouped_shape,
                               reference.m_grouped_fp8_gemm_nt_contiguous, kernels.m_grouped_fp8_gemm_nt_contiguous)
grouped_ragged = _define("ragged", "jax_deepgemm_grouped_ragged", _m_grouped_shape, reference.fp8_grouped_gemm_nt,
                         kernels.fp8_grouped_gemm_nt)
m_grouped_masked = _define("masked", "jax_deepgemm_m_grouped_masked", _masked_shape,
                           reference.m_grouped_fp8_gemm_nt_masked, kernels.m_grouped_fp8_gemm_nt_masked)
k_grouped = _define("k_grouped", "jax_deepgemm_k_grouped", _k_grouped_shape, reference.k_grouped_fp8_gemm_nt_contiguous,
                    kernels.k_grouped_fp8_gemm_nt_contiguous)

FAMILIES = (fp8_gemm, m_grouped_contiguous, grouped_ragged, m_grouped_masked, k_grouped)

# The rules that need the families themselves (a batched dense GEMM is a masked grouped one, ...).
from . import batching, sharding  # noqa: E402

batching.register(dense=fp8_gemm, contiguous=m_grouped_contiguous, ragged=grouped_ragged, masked=m_grouped_masked,
                  k_grouped=k_grouped)
sharding.register(FAMILIES)
