"""Accuracy metric shared by the tests, the demo and the benchmarks."""

from __future__ import annotations

import numpy as np

from ._types import ArrayLike


def calc_diff(x: ArrayLike, y: ArrayLike) -> float:
    """1 - 2*sum(x*y) / sum(x*x + y*y) in float64: 0 for identical tensors, about the relative squared error
    otherwise (API.md's accuracy metric; below 1e-3 for bf16 FP8 GEMM output on random normal data)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:  # broadcasting would silently compare the wrong elements
        raise ValueError(f"calc_diff: x has shape {x.shape} and y has shape {y.shape}; they must be equal")
    denominator = float(np.sum(x * x + y * y))
    if denominator == 0.0:
        return 0.0
    return float(1.0 - 2.0 * np.sum(x * y) / denominator)
