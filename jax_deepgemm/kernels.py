"""The CUDA side of each primitive: the layout the kernels want (made here and fused by XLA) and the FFI call.

Each function takes the primitive's operands (already validated and normalised) and its params, and is lowered
with `mlir.lower_fun` inside the primitive's CUDA lowering rule; the static configuration travels to the C++
handler as FFI attributes, where it picks and JIT-compiles the kernel when XLA compiles the program.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import runtime

FP8_GEMM_TARGET = "jdg_fp8_gemm"
_C_KIND = {None: 0, jnp.dtype(jnp.bfloat16): 1, jnp.dtype(jnp.float32): 2}


def _pad_k(x: jax.Array, multiple: int = 16) -> jax.Array:
    """TMA needs 16-byte row strides; the K tail is zeros, which add nothing to the product."""
    k = x.shape[-1]
    pad = -k % multiple
    return x if pad == 0 else jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, pad)])


def fp8_gemm_nt(a, a_scale, b, b_scale, c=None, *, out_dtype):
    m, n = a.shape[0], b.shape[0]
    a, b = _pad_k(a), _pad_k(b)
    per_row = b_scale.shape[0] == n and n > 1
    # A's scales are read per K block for a run of rows, so the kernel wants them M-major: [kb, M].
    b_scale_arg = b_scale.T if per_row else b_scale
    operands = [a, a_scale.T, b, b_scale_arg] + ([c] if c is not None else [])
    call = jax.ffi.ffi_call(FP8_GEMM_TARGET, jax.ShapeDtypeStruct((m, n), out_dtype))
    return call(*operands, m=m, n=n, k=a.shape[1], num_sms=runtime.get_num_sms(), arch=runtime.ARCH,
                c_kind=_C_KIND[None if c is None else jnp.dtype(c.dtype)],
                a_e5m2=a.dtype == jnp.float8_e5m2, b_e5m2=b.dtype == jnp.float8_e5m2,
                b_scale_per_row=per_row, out_f32=jnp.dtype(out_dtype) == jnp.float32)
