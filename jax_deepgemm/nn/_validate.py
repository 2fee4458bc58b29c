"""Trace-time checks for the layers: every error names the function, the argument, its shape or dtype and what was
expected, before anything is traced further."""

from __future__ import annotations

import operator

import jax

from .._checks import WIDE_FLOAT_DTYPES, as_array


def floating(fn: str, name: str, x, shape: tuple[int | str, ...] | None = None, *, described: str = "",
             allow_empty: bool = False) -> jax.Array:
    """A float array (not FP8). `shape` entries are ints (must match) or names (any size, used in the message)."""
    x = as_array(fn, name, x)  # (NumPy arrays and lists too, as every public function takes them; no scalars)
    if x.dtype not in WIDE_FLOAT_DTYPES:
        raise TypeError(f"{fn}: {name} must be float32/bfloat16/float16, got {x.dtype}")
    if shape is not None:
        wanted = "[" + ", ".join(str(s) for s in shape) + "]" + (f" ({described})" if described else "")
        if x.ndim != len(shape) or any(isinstance(s, int) and s != d for s, d in zip(shape, x.shape)):
            raise ValueError(f"{fn}: {name} has shape {tuple(x.shape)}; expected {wanted}")
    if 0 in x.shape and not allow_empty:
        raise ValueError(f"{fn}: {name} has an empty dimension: shape {tuple(x.shape)}")
    return x


def static_int(fn: str, name: str, value, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, (bool, jax.core.Tracer)):
        raise TypeError(f"{fn}: {name} must be a static Python int, got {type(value).__name__}")
    try:
        v = operator.index(value)
    except TypeError as e:
        raise TypeError(f"{fn}: {name} must be a static Python int, got {type(value).__name__}") from e
    if v < minimum or (maximum is not None and v > maximum):
        bound = f"in [{minimum}, {maximum}]" if maximum is not None else f">= {minimum}"
        raise ValueError(f"{fn}: {name} must be {bound}, got {v}")
    return v
