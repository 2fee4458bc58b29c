"""Quantization helpers: per_token_cast_to_fp8 / per_block_cast_to_fp8 / dequantize / ceil_to_ue8m0 / calc_diff.

Scales must be exactly amax / 448 per block (or the smallest power of two >= it with use_ue8m0), data the nearest
float8_e4m3fn value of x / scale, and dequantize(quantize(x)) within e4m3's half-ulp of x."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
import oracle
from conftest import BF16, E4M3, F32, UE8M0, randn, seed_of, to64

SHAPES = [(1, 128), (3, 200), (5, 129), (130, 16), (257, 384), (1, 1), (128, 512)]
# jitted: one compilation per shape instead of one per eager op (the eager path is exercised below as well)
CASTS = {"per_token": (jax.jit(dg.per_token_cast_to_fp8, static_argnames="use_ue8m0"), 1),
         "per_block": (jax.jit(dg.per_block_cast_to_fp8, static_argnames="use_ue8m0"), 128)}
dequantize = jax.jit(dg.dequantize, static_argnames="block")


def f32_product(data, scale_full) -> np.ndarray:
    """f32(fp8) * f32(scale), rounded to float32 like the library's dequantize."""
    return (to64(data).astype(np.float32) * scale_full.astype(np.float32)).astype(np.float32)


def e4m3_error_bound(x64: np.ndarray, scale_full: np.ndarray) -> np.ndarray:
    """Round-to-nearest e4m3 (3 mantissa bits; subnormal spacing 2^-9): |q - v| <= max(2^-4 |v|, 2^-10) for
    v = x / scale, so |dequant - x| <= max(2^-4 |x|, 2^-10 scale); a little slack for float32 division rounding."""
    return np.maximum(2.0**-4 * np.abs(x64), 2.0**-10 * scale_full) * (1 + 1e-6) + 1e-30


@pytest.mark.parametrize("kind", list(CASTS))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [F32, BF16])
def test_cast_scales_data_and_roundtrip(kind, shape, dtype):
    cast, br = CASTS[kind]
    x = randn(seed_of(kind, shape), shape, dtype)
    data, scale = cast(x)
    rows, k = shape
    assert data.dtype == E4M3 and data.shape == shape
    assert scale.dtype == F32 and scale.shape == (-(-rows // br), oracle.kblocks(k))
    x64 = to64(x)
    amax = oracle.block_amax(x64, br)
    # scale = amax / 448 (to float32 rounding: XLA:CPU divides through the reciprocal, within an ulp of IEEE)
    np.testing.assert_allclose(to64(scale), amax / 448.0, rtol=2.0**-22, atol=0)
    # the block's largest element lands on +-448 (full use of the FP8 range)
    q_abs = np.abs(to64(data))
    np.testing.assert_array_equal(oracle.block_amax(q_abs, br), np.full(amax.shape, 448.0))
    # dequantize(quantize(x)) close to x, elementwise (rounding to nearest) and against the amax/448 bound
    deq = dequantize((data, scale), block=(br, 128))
    assert deq.dtype == F32 and deq.shape == shape
    err = np.abs(to64(deq) - x64)
    scale_full = oracle.expand_blocks(to64(scale), br, shape)
    assert np.all(err <= e4m3_error_bound(x64, scale_full))
    assert np.all(err <= oracle.expand_blocks(amax, br, shape) / 448.0 * 16.0 * (1 + 1e-6))
    # the block default is read off the scale's shape
    np.testing.assert_array_equal(np.asarray(dequantize((data, scale))), np.asarray(deq))
    # and the data are FP8 values whose product with the scale is the dequantized value
    np.testing.assert_array_equal(np.asarray(deq), f32_product(data, scale_full))


@pytest.mark.parametrize("kind", list(CASTS))
@pytest.mark.parametrize("shape", [(3, 200), (257, 384), (1, 16)])
def test_ue8m0_scales_are_smallest_power_of_two(kind, shape):
    cast, br = CASTS[kind]
    x = randn(seed_of("ue8m0", kind, shape), shape)
    data, scale = cast(x, use_ue8m0=True)
    assert scale.dtype == F32 and data.dtype == E4M3
    s = to64(scale)
    amax_scale = oracle.block_amax(to64(x), br) / 448.0
    mant, _ = np.frexp(s)
    assert np.all(mant == 0.5), "UE8M0 scales must be powers of two"
    assert np.all(s >= amax_scale * (1 - 1e-7))
    assert np.all(s / 2 < amax_scale), "not the smallest power of two >= amax / 448"
    np.testing.assert_array_equal(s, oracle.next_pow2_at_least(
        (oracle.block_amax(to64(x), br).astype(np.float32) / np.float32(448.0)).astype(np.float64)))
    # storing the scales in 8 bits loses nothing
    s8 = scale.astype(UE8M0)
    np.testing.assert_array_equal(to64(s8), s)
    deq = dequantize((data, s8), block=(br, 128))
    np.testing.assert_array_equal(np.asarray(deq), np.asarray(dequantize((data, scale), block=(br, 128))))
    x64 = to64(x)
    assert np.all(np.abs(to64(deq) - x64) <= e4m3_error_bound(x64, oracle.expand_blocks(s, br, shape)))


@pytest.mark.parametrize("kind", list(CASTS))
def test_ue8m0_exact_power_of_two_is_kept(kind):
    """amax = 448 * 2^e gives the scale 2^e itself (not 2^(e+1)), and the data hits 448."""
    cast, br = CASTS[kind]
    x = np.array(randn(1, (2, 256), spread=False)) * 0.01
    x[0, 5] = 448.0 * 0.5  # block (0, 0): amax 224 -> scale 0.5 exactly
    x[1, 130] = -448.0 * 4  # block (row 1 or 0, 1): amax 1792 -> scale 4
    data, scale = cast(jnp.asarray(x), use_ue8m0=True)
    s = to64(scale)
    assert s[0, 0] == 0.5
    assert s[-1, 1] == 4.0
    assert to64(data)[0, 5] == 448.0 and to64(data)[1, 130] == -448.0


@pytest.mark.parametrize("kind", list(CASTS))
@pytest.mark.parametrize("ue8m0", [False, True])
def test_all_zero_blocks(kind, ue8m0):
    """All-zero blocks get a finite, positive scale and zero data; the other blocks are unaffected."""
    cast, br = CASTS[kind]
    rows = 130 if kind == "per_block" else 3
    x = np.array(randn(2, (rows, 300)))
    x[: min(rows, 128), 128:256] = 0.0  # block (0, 1) all zero (whole 128x128 block for per_block)
    if kind == "per_token":
        x[2, :] = 0.0  # a whole row of zeros
    data, scale = cast(jnp.asarray(x), use_ue8m0=ue8m0)
    s, d = to64(scale), to64(data)
    assert np.all(np.isfinite(s)) and np.all(s > 0)
    assert np.all(d[: min(rows, 128), 128:256] == 0)
    assert not np.any(np.isnan(d))
    deq = to64(dequantize((data, scale)))
    assert np.all(deq[x == 0] == 0)
    np.testing.assert_allclose(deq, x, rtol=2.0**-4, atol=s.max() * 2.0**-9)
    x_all_zero = jnp.zeros((rows, 200), F32)
    d0, s0 = cast(x_all_zero, use_ue8m0=ue8m0)
    assert np.all(to64(d0) == 0) and np.all(np.isfinite(to64(s0))) and np.all(to64(s0) > 0)


@pytest.mark.parametrize("kind", list(CASTS))
def test_extreme_values_saturate_to_448_not_nan(kind):
    cast, br = CASTS[kind]
    x = np.array(randn(3, (4, 130), spread=False))
    x[1, 3] = 3.0e38
    x[2, 129] = -1e-30
    data, scale = cast(jnp.asarray(x))
    d = to64(data)
    assert not np.any(np.isnan(d)) and np.all(np.abs(d) <= 448.0)
    assert np.all(np.isfinite(to64(scale)))
    assert d[1, 3] == 448.0


def test_per_block_scale_covers_128_rows():
    """A 128x128 block's scale is the amax over its 128 rows: rows of one block share it, the next block not."""
    x = np.array(randn(4, (200, 128), spread=False))
    x[5, 7] = 1000.0
    data, scale = dg.per_block_cast_to_fp8(jnp.asarray(x))
    s = to64(scale)
    assert s.shape == (2, 1)
    assert s[0, 0] == pytest.approx(1000.0 / 448.0, rel=2.0**-22)
    assert s[1, 0] < 1.0
    d_tok, s_tok = dg.per_token_cast_to_fp8(jnp.asarray(x))
    assert s_tok.shape == (200, 1) and to64(s_tok)[5, 0] == s[0, 0] and to64(s_tok)[6, 0] < 1.0


def test_jit_and_vmap():
    x = randn(5, (3, 4, 200))
    d, s = jax.jit(jax.vmap(dg.per_token_cast_to_fp8))(x)
    assert d.shape == (3, 4, 200) and s.shape == (3, 4, 2)
    for i in range(3):
        di, si = dg.per_token_cast_to_fp8(x[i])
        np.testing.assert_array_equal(np.asarray(d[i]).view(np.uint8), np.asarray(di).view(np.uint8))
        np.testing.assert_array_equal(np.asarray(s[i]), np.asarray(si))
    deq = dg.dequantize((d, s))  # batched dequantize: leading dims
    assert deq.shape == (3, 4, 200)
    np.testing.assert_allclose(to64(deq), to64(x), rtol=2.0**-4, atol=to64(s).max() * 2.0**-9)


def test_dequantize_batched_block_scales():
    x = randn(6, (2, 130, 200))
    d, s = jax.jit(jax.vmap(dg.per_block_cast_to_fp8))(x)
    assert s.shape == (2, 2, 2)
    deq = to64(dequantize((d, s), block=(128, 128)))
    for i in range(2):
        np.testing.assert_array_equal(deq[i], to64(dequantize((d[i], s[i]))))
        ref = f32_product(d[i], oracle.expand_blocks(to64(s[i]), 128, (130, 200)))
        np.testing.assert_array_equal(deq[i], ref)


def test_dequantize_numpy_and_explicit_block():
    x = randn(7, (1, 300))
    d, s = dg.per_token_cast_to_fp8(x)
    # With one row, (1, 128) and (128, 128) coincide: both blocks give the same values.
    a = dg.dequantize((np.asarray(d), np.asarray(s)), block=(1, 128))
    b = dg.dequantize([d, s], block=(128, 128))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(np.asarray(a), oracle.dequant_lhs(d, s).astype(np.float32))


def test_ceil_to_ue8m0():
    v = jnp.asarray([1.0, 0.75, 0.5, 3.0, 448.0, 1e-30, 2.0**-126, 1.5e30, 2.0**100 * 1.000001], F32)
    got = to64(dg.ceil_to_ue8m0(v))
    np.testing.assert_array_equal(got, oracle.next_pow2_at_least(to64(v)))


def test_calc_diff():
    x = to64(randn(8, (64, 64)))
    y = x + 0.01 * to64(randn(9, (64, 64)))
    assert dg.calc_diff(x, x) == 0.0
    assert abs(dg.calc_diff(x, y) - oracle.calc_diff(x, y)) < 1e-12
    assert dg.calc_diff(x, -x) == pytest.approx(2.0)
    assert dg.calc_diff(np.zeros(3), np.zeros(3)) == 0.0
    assert 0 < dg.calc_diff(jnp.asarray(x, BF16), x) < 1e-4
