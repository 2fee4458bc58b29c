"""The CUDA side of each primitive: the layout the kernels want (made here and fused by XLA) and the FFI call.

Each function takes the primitive's operands (already validated and normalised) and its params, and is lowered
with `mlir.lower_fun` inside the primitive's CUDA lowering rule; the static configuration travels to the C++
handler as FFI attributes, where it picks and JIT-compiles the kernel when XLA compiles the program.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import runtime

FP8_GEMM_TARGET = "jdg_fp8_gemm"  # every family: the "grouping" attribute selects the grouped layouts
QUANTIZE_T_TARGET = "jdg_fp8_quantize_t"  # transposed_cast.py
_C_KIND = {None: 0, jnp.dtype(jnp.bfloat16): 1, jnp.dtype(jnp.float32): 2}


def export_disabled_checks() -> list[jax.export.DisabledSafetyCheck]:
    """What `jax.export.export(..., disabled_checks=...)` needs to serialize a program holding our kernels' calls:
    JAX refuses custom calls that it does not know to be stable unless told. The call's attributes describe the
    problem (shapes, dtypes, set_num_sms's cap); the process that runs an artifact must import a jax_deepgemm whose
    target takes the same attributes (no promise across releases), and picks the kernels for its own GPUs."""
    return [jax.export.DisabledSafetyCheck.custom_call(target) for target in (FP8_GEMM_TARGET, QUANTIZE_T_TARGET)]


def _pad_last(x: jax.Array, multiple: int) -> jax.Array:
    """Zeros appended to the last axis up to a multiple of `multiple`: TMA needs 16-byte row strides."""
    pad = -x.shape[-1] % multiple
    return x if pad == 0 else jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, pad)])


def _pad_k(x: jax.Array) -> jax.Array:
    """FP8 operands: K padded to 16 bytes; the K tail is zeros, which add nothing to the product.

    The pad runs on the rows viewed as the widest unsigned integers of up to 4 bytes (no jax_enable_x64 needed) that
    divide K: on an H200 XLA's pad of a [7000, 7000] FP8 array took 59.3 us as bytes, 24.8 us as 4-byte words
    (benchmarks/NOTES.md 153)."""
    k = x.shape[-1]
    width = next(w for w in (4, 2, 1) if k % w == 0)
    if k % 16 == 0 or width == 1:
        return _pad_last(x, 16)
    wide = {4: jnp.uint32, 2: jnp.uint16}[width]
    rows = jax.lax.bitcast_convert_type(x, jnp.uint8).reshape(x.shape[:-1] + (k // width, width))
    padded = _pad_last(jax.lax.bitcast_convert_type(rows, wide), 16 // width)
    as_bytes = jax.lax.bitcast_convert_type(padded, jnp.uint8).reshape(x.shape[:-1] + (-1,))
    return jax.lax.bitcast_convert_type(as_bytes, x.dtype)


def _scale_rows(x: jax.Array) -> jax.Array:
    """Scales as the kernel's TMA reads them ([..., rows of scales] with the last axis padded to a multiple of 4:
    16-byte strides). The padding is zeros and only ever lands in rows or columns that are not stored."""
    return _pad_last(x, 4)


def _common_attributes(a, b, per_row, out_dtype) -> dict:
    return dict(k=a.shape[-1], num_sms=runtime.get_num_sms(), sms_cap=runtime.get_sms_cap(),
                hbm_gbs=runtime.get_hbm_gbs(), arch=runtime.ARCH,
                a_e5m2=a.dtype == jnp.float8_e5m2, b_e5m2=b.dtype == jnp.float8_e5m2, b_scale_per_row=per_row,
                out_f32=jnp.dtype(out_dtype) == jnp.float32)


def _d_over_c(c_index: int, c, out_dtype, overwrite_c: bool) -> dict:
    """overwrite_c: the FFI call's D aliases its operand C (same shape and dtype), so XLA copies C first only where
    C is still needed after the call. A kernel with C takes the register epilogue (never the TMA store), where each
    thread reads its elements of C before it writes D there (fp8_gemm.cuh, add_c), and the handler leaves D unpoisoned
    when it is C."""
    aliased = overwrite_c and c is not None and jnp.dtype(c.dtype) == jnp.dtype(out_dtype)
    return {"input_output_aliases": {c_index: 0}} if aliased else {}


def fp8_gemm_nt(a, a_scale, b, b_scale, c=None, *, out_dtype, overwrite_c=False):
    m, n = a.shape[0], b.shape[0]
    a, b = _pad_k(a), _pad_k(b)
    per_row = b_scale.shape[0] == n and n > 1
    # Scales are read per K block for a run of rows or columns, so the kernel wants them M-/N-major: a_scale
    # [kb, M4], per-row b_scale [kb, N4]; 128x128 block scales stay [nb, kb].
    b_scale_arg = _scale_rows(b_scale.T) if per_row else b_scale
    operands = [a, _scale_rows(a_scale.T), b, b_scale_arg] + ([c] if c is not None else [])
    call = jax.ffi.ffi_call(FP8_GEMM_TARGET, jax.ShapeDtypeStruct((m, n), out_dtype),
                            **_d_over_c(4, c, out_dtype, overwrite_c))
    return call(*operands, m=m, n=n, c_kind=_C_KIND[None if c is None else jnp.dtype(c.dtype)],
                **_common_attributes(a, b, per_row, out_dtype))


def _grouped(grouping, a, a_scale, b, b_scale, groups, out_dtype, expected_m=0):
    """The M-grouped kernels (fp8_gemm_abi.h, "Grouped modes"). Every operand goes flat over the group axis, which
    costs nothing (row-major reshapes): A [rows, K] and its scales [kb, rows] (rows = M, or G * M for masked),
    B [G * N, K] and its scales [G * nb, kb] (128x128) or [G * kb, N] (per row, N fastest). The int32 group data
    (m_indices / group_sizes / masked_m) is read by the kernel on the device."""
    g, n, _ = b.shape
    m = a.shape[-2]  # masked: rows per group
    a, b = _pad_k(a), _pad_k(b)
    kp = a.shape[-1]
    per_row = b_scale.shape[1] == n and n > 1
    a_flat = a.reshape(-1, kp)
    a_scale_flat = _scale_rows(a_scale.reshape(a_flat.shape[0], -1).T)
    b_flat = b.reshape(g * n, kp)
    if per_row:
        b_scale_flat = _scale_rows(jnp.swapaxes(b_scale, 1, 2).reshape(-1, n))
    else:
        b_scale_flat = b_scale.reshape(-1, b_scale.shape[-1])
    call = jax.ffi.ffi_call(FP8_GEMM_TARGET, jax.ShapeDtypeStruct((a_flat.shape[0], n), out_dtype))
    d = call(a_flat, a_scale_flat, b_flat, b_scale_flat, groups, m=m, n=n, c_kind=0, grouping=grouping,
             num_groups=g, expected_m=int(expected_m), **_common_attributes(a, b, per_row, out_dtype))
    return d.reshape(a.shape[:-1] + (n,))


def m_grouped_fp8_gemm_nt_contiguous(a, a_scale, b, b_scale, m_indices, *, out_dtype):
    return _grouped("contiguous", a, a_scale, b, b_scale, m_indices, out_dtype)


def fp8_grouped_gemm_nt(a, a_scale, b, b_scale, group_sizes, *, out_dtype):
    return _grouped("ragged", a, a_scale, b, b_scale, group_sizes, out_dtype)


def m_grouped_fp8_gemm_nt_masked(a, a_scale, b, b_scale, masked_m, *, expected_m, out_dtype):
    # Only a heuristic hint: clamped to M here, so that any Python int fits the i64 attribute.
    return _grouped("masked", a, a_scale, b, b_scale, masked_m, out_dtype, expected_m=min(expected_m, a.shape[1]))


def k_grouped_fp8_gemm_nt_contiguous(a, a_scale, b, b_scale, group_sizes, *c, out_dtype, overwrite_c=False):
    """The k-grouped layout (fp8_gemm_abi.h, kFp8GemmKGrouped): A [M, K] and B [N, K] as they are (K is a multiple of
    128, segments run along it), both 1x128 scales M-/N-major ([kb, M4], [kb, N4]), C (f32) and D flat [G * M, N]."""
    (m, k), n, g = a.shape, b.shape[0], group_sizes.shape[0]
    c_flat = [c[0].reshape(g * m, n)] if c else []
    operands = [a, _scale_rows(a_scale.T), b, _scale_rows(b_scale.T), group_sizes] + c_flat
    call = jax.ffi.ffi_call(FP8_GEMM_TARGET, jax.ShapeDtypeStruct((g * m, n), out_dtype),
                            **_d_over_c(5, c_flat[0] if c else None, out_dtype, overwrite_c))
    attributes = _common_attributes(a, b, True, out_dtype)
    d = call(*operands, m=m, n=n, c_kind=_C_KIND[jnp.dtype(jnp.float32) if c else None], grouping="k_grouped",
             num_groups=g, expected_m=0, **attributes)
    return d.reshape(g, m, n)
