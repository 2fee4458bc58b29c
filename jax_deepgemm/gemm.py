"""Dense FP8 GEMMs with fine-grained scaling: D = C + A @ B^T (API.md, "Dense GEMMs").

The four layouts share one primitive: NN/TN/TT transpose their operands to NT here (XLA fuses the transposes into
the producers or emits one copy); scales always keep their logical shapes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _checks as check
from . import primitives
from ._types import ArrayLike, DTypeLike, QuantizedPair


def _gemm(fn: str, a, b, c, out_dtype, overwrite_c, a_transposed: bool, b_transposed: bool) -> jax.Array:
    out_dtype = check.out_dtype(fn, out_dtype)
    a_data, a_scale = check.pair(fn, "a", a)
    b_data, b_scale = check.pair(fn, "b", b)
    a_data = check.fp8(fn, "a[0] (a data)", a_data, 2)
    b_data = check.fp8(fn, "b[0] (b data)", b_data, 2)
    # Bring both operands to the kernel's NT storage: A [M, K], B [N, K].
    a_data = a_data.T if a_transposed else a_data
    b_data = b_data if b_transposed else b_data.T
    (m, k), (n, kb_) = a_data.shape, b_data.shape
    a_store = "[K, M]" if a_transposed else "[M, K]"
    b_store = "[N, K]" if b_transposed else "[K, N]"
    check.same(fn, "K", kb_, k, f"a is {a_store} with K={k}, b is {b_store} with K={kb_}")
    a_scale = check.scale(fn, "a[1] (a scale)", a_scale, check.scale_shapes_lhs(m, k))
    b_scale = check.scale(fn, "b[1] (b scale)", b_scale, check.scale_shapes_rhs(n, k))
    c = check.c_operand(fn, c, (m, n))
    overwrite_c = check.overwrite_c(fn, overwrite_c, c, out_dtype)
    operands = (a_data, a_scale, b_data, b_scale) + ((c,) if c is not None else ())
    return primitives.fp8_gemm.bind(*operands, out_dtype=out_dtype, overwrite_c=overwrite_c)


def fp8_gemm_nt(a: QuantizedPair, b: QuantizedPair, *, c: ArrayLike | None = None, out_dtype: DTypeLike = jnp.bfloat16,
                overwrite_c: bool = False) -> jax.Array:
    """D [M, N] = C + A @ B^T. a = (a_fp8 [M, K], a_scale [M, kb]); b = (b_fp8 [N, K], b_scale [nb, kb] for
    128x128 blocks or [N, kb] for per-row 1x128 scaling); scales float32 or float8_e8m0fnu.

    overwrite_c=True (c of out_dtype's dtype) lets the kernel write D into c's buffer. The values are the same either
    way; what changes is XLA's copies: a c carried through lax.scan / while_loop (an accumulator) or donated to jit
    then costs no copy of c per call, while a c still needed after the call (a jit argument not donated, or read
    again later) is copied by XLA first. Leave it False unless c is dead after the call."""
    return _gemm("fp8_gemm_nt", a, b, c, out_dtype, overwrite_c, a_transposed=False, b_transposed=True)


def fp8_gemm_nn(a: QuantizedPair, b: QuantizedPair, *, c: ArrayLike | None = None, out_dtype: DTypeLike = jnp.bfloat16,
                overwrite_c: bool = False) -> jax.Array:
    """As fp8_gemm_nt with B stored [K, N]."""
    return _gemm("fp8_gemm_nn", a, b, c, out_dtype, overwrite_c, a_transposed=False, b_transposed=False)


def fp8_gemm_tn(a: QuantizedPair, b: QuantizedPair, *, c: ArrayLike | None = None, out_dtype: DTypeLike = jnp.bfloat16,
                overwrite_c: bool = False) -> jax.Array:
    """As fp8_gemm_nt with A stored [K, M] and B stored [K, N]."""
    return _gemm("fp8_gemm_tn", a, b, c, out_dtype, overwrite_c, a_transposed=True, b_transposed=False)


def fp8_gemm_tt(a: QuantizedPair, b: QuantizedPair, *, c: ArrayLike | None = None, out_dtype: DTypeLike = jnp.bfloat16,
                overwrite_c: bool = False) -> jax.Array:
    """As fp8_gemm_nt with A stored [K, M]."""
    return _gemm("fp8_gemm_tt", a, b, c, out_dtype, overwrite_c, a_transposed=True, b_transposed=True)
