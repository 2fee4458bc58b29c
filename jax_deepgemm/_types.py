"""Type aliases of the public signatures. The package ships `py.typed`, so type checkers read them."""

from __future__ import annotations

from jax.typing import ArrayLike, DTypeLike

# A quantized operand, as the quantizers return it and every GEMM takes it: (FP8 data, scales).
QuantizedPair = tuple[ArrayLike, ArrayLike]

__all__ = ["ArrayLike", "DTypeLike", "QuantizedPair"]
