"""FP8 quantization helpers (pure JAX, jit-able): 1x128 per-token and 128x128 per-block scaling.

Scale convention (API.md): value = f32(fp8) * scale, with scale = amax / 448 over each block (448 is the largest
float8_e4m3fn value), amax clamped away from zero so that all-zero blocks get a finite scale.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._types import ArrayLike, QuantizedPair

BLOCK = 128
FP8_MAX = 448.0  # largest finite float8_e4m3fn
_AMAX_FLOOR = 1e-4  # an all-zero block still gets a finite, non-zero scale


def ceil_div(x: int, y: int) -> int:
    return -(-x // y)


def ceil_to_ue8m0(scale: ArrayLike) -> jax.Array:
    """Rounds positive float32 scales up to the next power of two (exactly representable in float8_e8m0fnu)."""
    mantissa, exponent = jnp.frexp(scale)  # scale = mantissa * 2**exponent, mantissa in [0.5, 1)
    exponent = jnp.where(mantissa == 0.5, exponent - 1, exponent)  # already a power of two: keep it
    return jnp.ldexp(jnp.ones_like(scale), exponent)


# amax / 448 as XLA compiles a division by that constant: a product with its float32 reciprocal (within an ulp of
# the quotient), written out so that every way of running the helpers agrees: jitted, and eagerly, where JAX 0.12.1
# divides exactly; the quantization kernels compute the same product (cuda/jax_deepgemm/fp8_cast.cuh).
_INV_FP8_MAX = np.float32(1.0 / FP8_MAX)


def _scale_from_amax(amax: jax.Array, use_ue8m0: bool) -> jax.Array:
    scale = jnp.maximum(amax, _AMAX_FLOOR) * _INV_FP8_MAX
    return ceil_to_ue8m0(scale) if use_ue8m0 else scale


def _to_fp8(x: jax.Array, scale: jax.Array) -> jax.Array:
    # Clip guards against x / scale landing a rounding step above 448 (float8_e4m3fn has no infinity: it would be NaN).
    return jnp.clip(x / scale, -FP8_MAX, FP8_MAX).astype(jnp.float8_e4m3fn)


def _check_2d(fn: str, x, use_ue8m0) -> tuple[jax.Array, bool]:
    from . import _checks as check  # noqa: PLC0415  (imported here: _checks imports this module)

    use_ue8m0 = check.static_bool(fn, "use_ue8m0", use_ue8m0)
    # An empty x is allowed (it quantizes to empty arrays), and so is FP8 data (re-quantized).
    return check.floating(fn, "x", x, ndim=2, allow_empty=True, allow_fp8=True), use_ue8m0


def per_token_cast_to_fp8(x: ArrayLike, *, use_ue8m0: bool = False) -> tuple[jax.Array, jax.Array]:
    """Quantizes x [M, K] with one scale per row and 128-wide K block: returns (x_fp8 [M, K], scale f32 [M, kb])."""
    x, use_ue8m0 = _check_2d("per_token_cast_to_fp8", x, use_ue8m0)
    m, k = x.shape
    kb = ceil_div(k, BLOCK)
    xp = jnp.pad(x.astype(jnp.float32), ((0, 0), (0, kb * BLOCK - k))).reshape(m, kb, BLOCK)
    scale = _scale_from_amax(jnp.max(jnp.abs(xp), axis=2), use_ue8m0)
    x_fp8 = _to_fp8(xp, scale[:, :, None]).reshape(m, kb * BLOCK)[:, :k]
    return x_fp8, scale


def per_block_cast_to_fp8(x: ArrayLike, *, use_ue8m0: bool = False) -> tuple[jax.Array, jax.Array]:
    """Quantizes x [N, K] with one scale per 128x128 block: returns (x_fp8 [N, K], scale f32 [nb, kb])."""
    x, use_ue8m0 = _check_2d("per_block_cast_to_fp8", x, use_ue8m0)
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


def dequantize(pair: QuantizedPair, *, block: tuple[int, int] | None = None) -> jax.Array:
    """Returns the float32 values of a quantized pair (data [..., R, K], scale).

    `block` is (1, 128) for per-token scales [..., R, kb] or (128, 128) for block scales [..., ceil(R/128), kb];
    by default it is read off the scale's shape (the two coincide when R == 1).
    """
    from . import _checks as check  # noqa: PLC0415  (imported here: _checks imports this module)

    fn = "dequantize"
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise TypeError(f"{fn}: pair must be a (data, scale) tuple, got {type(pair).__name__}")
    for name, x, allowed, wanted in (("pair[0] (data)", pair[0], check.FP8_DTYPES, "float8_e4m3fn or float8_e5m2"),
                                     ("pair[1] (scale)", pair[1], check.SCALE_DTYPES, "float32 or float8_e8m0fnu")):
        array = check.as_array(fn, name, x)
        if array.dtype not in allowed:
            raise TypeError(f"{fn}: {name} must be {wanted}, got {check._given_dtype(x, array)}")
    data, scale = jnp.asarray(pair[0]), jnp.asarray(pair[1])
    if data.ndim < 2:
        raise ValueError(f"{fn}: pair[0] (data) must be [..., rows, K] (rank >= 2), got shape {data.shape}")
    lead, (rows, k) = data.shape[:-2], data.shape[-2:]
    per_token = lead + (rows, ceil_div(k, BLOCK))
    per_block = lead + (ceil_div(rows, BLOCK), ceil_div(k, BLOCK))
    if block is None:
        block = (1, BLOCK) if scale.shape == per_token else (BLOCK, BLOCK)
    shapes = {(1, BLOCK): per_token, (BLOCK, BLOCK): per_block}  # each block's scale shape
    chosen = next((b for b in shapes if isinstance(block, (tuple, list)) and tuple(block) == b), None)  # (or a list)
    if chosen is None:
        raise ValueError(f"{fn}: block must be (1, 128) or (128, 128), got {block}")
    expected = shapes[chosen]
    if scale.shape != expected:
        raise ValueError(f"{fn}: pair[1] (scale) has shape {scale.shape}; expected {expected} for data {data.shape} "
                         f"and block {block}")
    return data.astype(jnp.float32) * expand_scale(scale, chosen, data.shape)
