"""FP8 quantization helpers (pure JAX, jit-able): 1x128 per-token and 128x128 per-block scaling.

Scale convention (API.md): value = f32(fp8) * scale, with scale = amax / 448 over each block (448 is the largest
float8_e4m3fn value), amax clamped away from zero so that all-zero blocks get a finite scale.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

BLOCK = 128
FP8_MAX = 448.0  # largest finite float8_e4m3fn
_AMAX_FLOOR = 1e-4  # an all-zero block still gets a finite, non-zero scale


def ceil_div(x: int, y: int) -> int:
    return -(-x // y)


def ceil_to_ue8m0(scale: jax.Array) -> jax.Array:
    """Rounds positive float32 scales up to the next power of two (exactly representable in float8_e8m0fnu)."""
    mantissa, exponent = jnp.frexp(scale)  # scale = mantissa * 2**exponent, mantissa in [0.5, 1)
    exponent = jnp.where(mantissa == 0.5, exponent - 1, exponent)  # already a power of two: keep it
    return jnp.ldexp(jnp.ones_like(scale), exponent)


def _scale_from_amax(amax: jax.Array, use_ue8m0: bool) -> jax.Array:
    scale = jnp.maximum(amax, _AMAX_FLOOR) / FP8_MAX
    return ceil_to_ue8m0(scale) if use_ue8m0 else scale


def _to_fp8(x: jax.Array, scale: jax.Array) -> jax.Array:
    # Clip guards against x / scale landing a rounding step above 448 (float8_e4m3fn has no infinity: it would be NaN).
    return jnp.clip(x / scale, -FP8_MAX, FP8_MAX).astype(jnp.float8_e4m3fn)


def _check_2d(name: str, x) -> jax.Array:
    x = jnp.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"{name}: x must be 2-D [rows, K], got shape {x.shape}")
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"{name}: x must be a floating-point array, got dtype {x.dtype}")
    return x


def per_token_cast_to_fp8(x, *, use_ue8m0: bool = False) -> tuple[jax.Array, jax.Array]:
    """Quantizes x [M, K] with one scale per row and 128-wide K block: returns (x_fp8 [M, K], scale f32 [M, kb])."""
    x = _check_2d("per_token_cast_to_fp8", x)
    m, k = x.shape
    kb = ceil_div(k, BLOCK)
    xp = jnp.pad(x.astype(jnp.float32), ((0, 0), (0, kb * BLOCK - k))).reshape(m, kb, BLOCK)
    scale = _scale_from_amax(jnp.max(jnp.abs(xp), axis=2), use_ue8m0)
    x_fp8 = _to_fp8(xp, scale[:, :, None]).reshape(m, kb * BLOCK)[:, :k]
    return x_fp8, scale


def per_block_cast_to_fp8(x, *, use_ue8m0: bool = False) -> tuple[jax.Array, jax.Array]:
    """Quantizes x [N, K] with one scale per 128x128 block: returns (x_fp8 [N, K], scale f32 [nb, kb])."""
    x = _check_2d("per_block_cast_to_fp8", x)
    n, k = x.shape
    nb, kb = ceil_div(n, BLOCK), ceil_div(k, BLOCK)
    xp = jnp.pad(x.astype(jnp.float32), ((0, nb * BLOCK - n), (0, kb * BLOCK - k))).reshape(nb, BLOCK, kb, BLOCK)
    scale = _scale_from_amax(jnp.max(jnp.abs(xp), axis=(1, 3)), use_ue8m0)
    x_fp8 = _to_fp8(xp, scale[:, None, :, None]).reshape(nb * BLOCK, kb * BLOCK)[:n, :k]
    return x_fp8, scale


def expand_scale(scale: jax.Array, block: tuple[int, int], shape: tuple[int, ...]) -> jax.Array:
    """Broadcasts a block scale [..., rows/br, cols/bc] to one value per element of `shape` (float32)."""
    br, bc = block
    s = scale.astype(jnp.float32)
    s = jnp.repeat(s, br, axis=-2)[..., : shape[-2], :] if br > 1 else s
    s = jnp.repeat(s, bc, axis=-1)[..., : shape[-1]] if bc > 1 else s
    return s


def dequantize(pair, *, block: tuple[int, int] | None = None) -> jax.Array:
    """Returns the float32 values of a quantized pair (data [..., R, K], scale).

    `block` is (1, 128) for per-token scales [..., R, kb] or (128, 128) for block scales [..., ceil(R/128), kb];
    by default it is read off the scale's shape (the two coincide when R == 1).
    """
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise TypeError("dequantize: pair must be a (data, scale) tuple")
    data, scale = jnp.asarray(pair[0]), jnp.asarray(pair[1])
    if data.ndim < 2 or scale.ndim != data.ndim:
        raise ValueError(f"dequantize: data {data.shape} and scale {scale.shape} must have the same rank >= 2")
    rows, k = data.shape[-2:]
    per_token = scale.shape[:-2] + (rows, ceil_div(k, BLOCK))
    per_block = scale.shape[:-2] + (ceil_div(rows, BLOCK), ceil_div(k, BLOCK))
    if block is None:
        block = (1, BLOCK) if scale.shape == per_token else (BLOCK, BLOCK)
    block = tuple(block)
    expected = {(1, BLOCK): per_token, (BLOCK, BLOCK): per_block}.get(block)
    if expected is None:
        raise ValueError(f"dequantize: block must be (1, 128) or (128, 128), got {block}")
    if scale.shape != expected or data.shape[:-2] != scale.shape[:-2]:
        raise ValueError(f"dequantize: scale has shape {scale.shape}; expected {expected} for data {data.shape} "
                         f"and block {block}")
    return data.astype(jnp.float32) * expand_scale(scale, block, data.shape)
