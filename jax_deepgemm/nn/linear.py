"""`fp8_linear`: a dense layer's `x @ w + b` with the product in FP8 (forward and backward) via `fp8_dot`."""

from __future__ import annotations

import jax

from .._types import ArrayLike

from ..differentiable import fp8_dot, fp8_dot_result_spec
from ..primitives import auto_axes_if_explicit
from ._validate import floating


@auto_axes_if_explicit(fp8_dot_result_spec)
def fp8_linear(x: ArrayLike, w: ArrayLike, b: ArrayLike | None = None) -> jax.Array:
    """x [..., K] @ w [K, N] (+ b [N]) -> [..., N] in x.dtype.

    The product runs in FP8 (per-token activations, 128x128 weight blocks, FP32 promotion), the bias is added in
    x.dtype. Differentiable in x, w and b. Empty dimensions give what x @ w + b gives (see fp8_dot)."""
    fn = "fp8_linear"
    x = floating(fn, "x", x, allow_empty=True)
    if x.ndim < 1:
        raise ValueError(f"{fn}: x must be [..., K], got a scalar")
    w = floating(fn, "w", w, (x.shape[-1], "N"), described=f"[K, N] with K = x.shape[-1] = {x.shape[-1]}",
                 allow_empty=True)
    y = fp8_dot(x, w)
    if b is None:
        return y
    b = floating(fn, "b", b, (w.shape[1],), described=f"[N] with N = w.shape[1] = {w.shape[1]}", allow_empty=True)
    # (b given y's rank: programs running with jax_numpy_rank_promotion='raise' refuse an implicit broadcast)
    return y + b.astype(y.dtype).reshape((1,) * (y.ndim - 1) + b.shape)
