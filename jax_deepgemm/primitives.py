"""One JAX primitive per kernel family, with its abstract eval, lowerings, JVP and batching rule.

Lowering: on CUDA the rule asks `runtime.use_kernels()` and emits the FFI call of `kernels.py` (sm_90) or the
reference; every other platform lowers to the reference (`reference.py`), so CPU runs exercise the very same
primitives and rules as the GPU.

Operands are positional and already normalised by the public functions (see `reference.py`); an optional `c`
is always the last operand, and its presence is visible from the operand count.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import jax
import jax.numpy as jnp
from jax import lax
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir, xla

from . import kernels, reference, runtime


@dataclass(frozen=True)
class Family:
    primitive: Primitive
    reference: Callable
    kernel: Callable | None  # the CUDA path, None while the family has no kernel yet

    def bind(self, *operands, **params):
        return self.primitive.bind(*operands, **params)


def _shaped(shape, dtype):
    return jax.core.ShapedArray(tuple(shape), jnp.dtype(dtype))


def _cuda_lowering(family_ref: Callable, kernel: Callable | None):
    reference_rule = mlir.lower_fun(family_ref, multiple_results=False)
    kernel_rule = mlir.lower_fun(kernel, multiple_results=False) if kernel is not None else None

    def rule(ctx, *args, **params):
        if kernel_rule is not None and runtime.use_kernels():
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


def _sequential_batcher(prim: Primitive):
    """Correct for any batching pattern: one primitive call per batch element (lax.map)."""

    def batcher(axis_data, args, dims, **params):
        del axis_data
        if all(d is None for d in dims):  # JAX calls fancy batchers with no batched operand too (e.g. under grad)
            return prim.bind(*args, **params), None
        batched = [jnp.moveaxis(x, d, 0) for x, d in zip(args, dims) if d is not None]

        def one(xs):
            it = iter(xs)
            return prim.bind(*[next(it) if d is not None else x for x, d in zip(args, dims)], **params)

        return lax.map(one, batched), 0

    return batcher


def _define(name: str, abstract_eval: Callable, ref: Callable, kernel: Callable | None = None) -> Family:
    prim = Primitive(name)
    prim.def_impl(partial(xla.apply_primitive, prim))
    prim.def_abstract_eval(abstract_eval)
    mlir.register_lowering(prim, mlir.lower_fun(ref, multiple_results=False))
    mlir.register_lowering(prim, _cuda_lowering(ref, kernel), platform="cuda")
    ad.primitive_jvps[prim] = _jvp_via_reference(prim, ref)
    batching.fancy_primitive_batchers[prim] = _sequential_batcher(prim)
    return Family(prim, ref, kernel)


# ---- abstract evaluation: output shape and dtype from the (already validated) operands ----

def _dense_abstract(a, a_scale, b, b_scale, *c, out_dtype):
    return _shaped((a.shape[0], b.shape[0]), out_dtype)


def _m_grouped_abstract(a, a_scale, b, b_scale, groups, *, out_dtype, **_):
    return _shaped((a.shape[0], b.shape[1]), out_dtype)


def _masked_abstract(a, a_scale, b, b_scale, masked_m, *, expected_m, out_dtype):
    return _shaped((a.shape[0], a.shape[1], b.shape[1]), out_dtype)


def _k_grouped_abstract(a, a_scale, b, b_scale, group_sizes, *c):
    return _shaped((group_sizes.shape[0], a.shape[0], b.shape[0]), jnp.float32)


fp8_gemm = _define("jax_deepgemm_fp8_gemm", _dense_abstract, reference.fp8_gemm_nt, kernels.fp8_gemm_nt)
m_grouped_contiguous = _define("jax_deepgemm_m_grouped_contiguous", _m_grouped_abstract,
                               reference.m_grouped_fp8_gemm_nt_contiguous, kernels.m_grouped_fp8_gemm_nt_contiguous)
grouped_ragged = _define("jax_deepgemm_grouped_ragged", _m_grouped_abstract, reference.fp8_grouped_gemm_nt,
                         kernels.fp8_grouped_gemm_nt)
m_grouped_masked = _define("jax_deepgemm_m_grouped_masked", _masked_abstract,
                           reference.m_grouped_fp8_gemm_nt_masked, kernels.m_grouped_fp8_gemm_nt_masked)
k_grouped = _define("jax_deepgemm_k_grouped", _k_grouped_abstract, reference.k_grouped_fp8_gemm_nt_contiguous,
                    kernels.k_grouped_fp8_gemm_nt_contiguous)

FAMILIES = (fp8_gemm, m_grouped_contiguous, grouped_ragged, m_grouped_masked, k_grouped)
