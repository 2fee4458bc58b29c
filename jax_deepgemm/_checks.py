"""Trace-time validation shared by the public functions: every error names the function, the argument, what it
got and what was expected, and is raised before anything reaches a kernel."""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np

from .quantization import BLOCK, ceil_div

FP8_DTYPES = (jnp.dtype(jnp.float8_e4m3fn), jnp.dtype(jnp.float8_e5m2))
# What the quantizers and the differentiable ops take as values (float64 where x64 keeps it). Other narrow floats
# (FP8 variants with other encodings: e4m3fnuz, IEEE e4m3, e3m4; FP4; E8M0) are not numbers these ops read.
WIDE_FLOAT_DTYPES = tuple(jnp.dtype(t) for t in (jnp.float32, jnp.bfloat16, jnp.float16, jnp.float64))
SCALE_DTYPES = (jnp.dtype(jnp.float32), jnp.dtype(jnp.float8_e8m0fnu))
OUT_DTYPES = (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float32))
C_DTYPES = (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float32), jnp.dtype(jnp.float16))


def as_array(fn: str, name: str, x) -> jax.Array:
    """x as a JAX array, or a TypeError naming `fn`'s argument `name` (Python scalars and None are refused)."""
    if isinstance(x, (bool, int, float, complex)) or x is None:
        raise TypeError(f"{fn}: {name} must be an array, got {type(x).__name__} {x!r}")
    try:
        return jnp.asarray(x)
    except (TypeError, ValueError, OverflowError) as e:  # strings, ragged lists, ints beyond 64 bits, objects
        raise TypeError(f"{fn}: {name} must be an array, got {type(x).__name__} ({e})") from e


def _given_dtype(original, converted: jax.Array):
    """The dtype the caller passed (NumPy int64 data must be reported as int64, not as the int32 JAX made of it)."""
    return getattr(original, "dtype", converted.dtype)


def out_dtype(fn: str, dtype) -> np.dtype:
    try:
        d = jnp.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"{fn}: out_dtype must be jnp.bfloat16 or jnp.float32, got {dtype!r}") from e
    if d not in OUT_DTYPES:
        raise TypeError(f"{fn}: out_dtype must be jnp.bfloat16 or jnp.float32, got {d}")
    return d


def pair(fn: str, name: str, value) -> tuple:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"{fn}: {name} must be a pair (data, scale), got {type(value).__name__}")
    return tuple(value)


def fp8(fn: str, name: str, x, ndim: int) -> jax.Array:
    original, x = x, as_array(fn, name, x)
    if x.dtype not in FP8_DTYPES:
        raise TypeError(f"{fn}: {name} must be float8_e4m3fn or float8_e5m2, got {_given_dtype(original, x)} "
                        "(quantize with per_token_cast_to_fp8 / per_block_cast_to_fp8)")
    if x.ndim != ndim:
        raise ValueError(f"{fn}: {name} must be {ndim}-D, got shape {x.shape}")
    not_empty(fn, name, x)
    return x


def not_empty(fn: str, name: str, x: jax.Array) -> None:
    if 0 in x.shape:
        raise ValueError(f"{fn}: {name} has an empty dimension: shape {x.shape} (every dimension must be >= 1)")


def floating(fn: str, name: str, x, ndim: int | None = None, allow_empty: bool = False,
             allow_fp8: bool = False) -> jax.Array:
    """A float32/bfloat16/float16 array (FP8 only where allowed: the GEMMs take FP8 as (data, scale) pairs)."""
    original, x = x, as_array(fn, name, x)
    if x.dtype not in WIDE_FLOAT_DTYPES + (FP8_DTYPES if allow_fp8 else ()):
        wanted = "float32/bfloat16/float16" + ("/float8_e4m3fn/float8_e5m2" if allow_fp8 else "")
        raise TypeError(f"{fn}: {name} must be {wanted}, got {_given_dtype(original, x)}")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{fn}: {name} must be {ndim}-D, got shape {x.shape}")
    if not allow_empty:
        not_empty(fn, name, x)
    return x


def scale(fn: str, name: str, s, expected: dict[str, tuple[int, ...]]) -> jax.Array:
    """Checks a scale against the allowed shapes (`expected` maps a description to a shape); returns float32.
    NumPy float64 scales are accepted (JAX stores them as float32, exactly what is needed)."""
    original, s = s, as_array(fn, name, s)
    if s.dtype not in SCALE_DTYPES:
        raise TypeError(f"{fn}: {name} must be float32 or float8_e8m0fnu, got {_given_dtype(original, s)}")
    if tuple(s.shape) not in expected.values():
        wanted = " or ".join(f"{shape} ({desc})" for desc, shape in expected.items())
        raise ValueError(f"{fn}: {name} has shape {tuple(s.shape)}; expected {wanted}")
    return s.astype(jnp.float32)  # UE8M0 holds powers of two: exact in float32, and the math is the same


def index(fn: str, name: str, x, shape: tuple[int | None, ...]) -> jax.Array:
    """An integer array of the given shape (None: any size) as int32; non-integer dtypes are a TypeError."""
    original = x
    if not isinstance(x, (jax.Array, bool, int, float, complex)) and x is not None:
        # Host data (NumPy, lists): clamp 64-bit values here, before jnp.asarray would keep only their low 32 bits.
        try:
            host = np.asarray(x)
        except (TypeError, ValueError, OverflowError) as e:  # e.g. a ragged list
            raise TypeError(f"{fn}: {name} must be an integer array (int32), got {type(x).__name__} ({e})") from e
        if np.issubdtype(host.dtype, np.integer):
            x = _clamp_to_int32(np, host)
        elif host.dtype == object:  # Python ints beyond 64 bits, or mixed objects
            raise TypeError(f"{fn}: {name} must be an integer array (int32), got {type(x).__name__} of objects "
                            "(values beyond 64 bits?)")
    x = as_array(fn, name, x)
    if not jnp.issubdtype(x.dtype, jnp.integer):
        raise TypeError(f"{fn}: {name} must be an integer array (int32), got {_given_dtype(original, x)}")
    if x.ndim != len(shape) or any(e is not None and e != d for d, e in zip(x.shape, shape)):
        wanted = tuple("any" if e is None else e for e in shape)
        raise ValueError(f"{fn}: {name} has shape {tuple(x.shape)}; expected {wanted}")
    # Values are clamped to what fits in int32 (device data may hold anything; the ops define every value).
    return _clamp_to_int32(jnp, x).astype(jnp.int32)


def _clamp_to_int32(xp, x):
    """x (integer) with values clamped to int32's range; unsigned types only from above (a negative bound would
    wrap around in their dtype)."""
    info = np.iinfo(np.int32)
    if x.dtype.itemsize < 4 or x.dtype == np.int32:
        return x
    if np.issubdtype(x.dtype, np.unsignedinteger):
        return xp.minimum(x, xp.asarray(info.max, x.dtype))
    return xp.clip(x, xp.asarray(info.min, x.dtype), xp.asarray(info.max, x.dtype))


def c_operand(fn: str, c, shape: tuple[int, ...]) -> jax.Array | None:
    if c is None:
        return None
    original, c = c, as_array(fn, "c", c)
    if c.dtype not in C_DTYPES:
        raise TypeError(f"{fn}: c must be float32, bfloat16 or float16, got {_given_dtype(original, c)}")
    if tuple(c.shape) != tuple(shape):
        raise ValueError(f"{fn}: c has shape {tuple(c.shape)}; expected {tuple(shape)} (the output's shape)")
    return c if c.dtype != jnp.float16 else c.astype(jnp.float32)


def overwrite_c(fn: str, overwrite, c, out_dtype) -> bool:
    """overwrite_c=True lets D take C's buffer (the FFI call aliases them), which needs a C of D's dtype."""
    if not isinstance(overwrite, (bool, np.bool_)):
        raise TypeError(f"{fn}: overwrite_c must be a Python bool, got {_kind(overwrite)}")
    if overwrite and c is None:
        raise ValueError(f"{fn}: overwrite_c=True writes D over c's buffer, but no c was given")
    if overwrite and c.dtype != jnp.dtype(out_dtype):
        raise ValueError(f"{fn}: overwrite_c=True writes D over c's buffer, so c must have out_dtype's dtype "
                         f"({jnp.dtype(out_dtype).name}); got c of {c.dtype.name}")
    return bool(overwrite)


def _kind(value) -> str:
    if isinstance(value, jax.core.Tracer):
        return "a traced value (mark the argument static, e.g. jax.jit(..., static_argnums=...))"
    return type(value).__name__


def static_int(fn: str, name: str, value, minimum: int = 0) -> int:
    if isinstance(value, bool) or isinstance(value, jax.core.Tracer):
        raise TypeError(f"{fn}: {name} must be a static Python int, got {_kind(value)}")
    try:
        v = operator.index(value)
    except TypeError as e:
        raise TypeError(f"{fn}: {name} must be a static Python int, got {type(value).__name__}") from e
    if v < minimum:
        raise ValueError(f"{fn}: {name} must be >= {minimum}, got {v}")
    return v


def static_bool(fn: str, name: str, value) -> bool:
    """A Python/NumPy bool (or 0/1): it selects the traced program, so it cannot be a traced value."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"{fn}: {name} must be a static Python bool, got {_kind(value)}")


def same(fn: str, what: str, got: int, expected: int, detail: str) -> None:
    if got != expected:
        raise ValueError(f"{fn}: {what} mismatch: {detail} (got {got}, expected {expected})")


def scale_shapes_lhs(m: int, k: int, lead: tuple[int, ...] = ()) -> dict[str, tuple[int, ...]]:
    return {"[..., M, ceil(K/128)] per-token": lead + (m, ceil_div(k, BLOCK))}


def scale_shapes_rhs(n: int, k: int, lead: tuple[int, ...] = (), per_row: bool = True) -> dict:
    shapes = {"[..., ceil(N/128), ceil(K/128)] 128x128 blocks": lead + (ceil_div(n, BLOCK), ceil_div(k, BLOCK))}
    if per_row:
        shapes["[..., N, ceil(K/128)] per-row"] = lead + (n, ceil_div(k, BLOCK))
    return shapes
