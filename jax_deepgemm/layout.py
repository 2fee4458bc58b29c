"""DeepGEMM's layout utilities with JAX semantics.

JAX arrays carry no strides: their physical layout is XLA's choice. So where DeepGEMM returns a re-strided view
(MN-major, MN padded to 16 bytes), these functions return the scale in its logical shape, validated and as float32,
and the MN-major, TMA-aligned copy the kernels read is made inside the library (fused by XLA into the producer).
Every GEMM accepts what these functions return.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _checks as check
from ._types import ArrayLike
from .quantization import BLOCK, ceil_div

_TMA_ALIGNMENT_BYTES = 16


def get_m_alignment_for_contiguous_layout() -> int:
    """Row alignment of each expert's run in m_grouped_fp8_gemm_nt_contiguous (the kernels' BLOCK_M)."""
    return BLOCK


def get_tma_aligned_size(x: int, element_size: int) -> int:
    """x rounded up so that x elements of `element_size` bytes span a multiple of 16 bytes."""
    fn = "get_tma_aligned_size"
    x = check.static_int(fn, "x", x)
    element_size = check.static_int(fn, "element_size", element_size, 1)
    if element_size not in (1, 2, 4, 8, 16):
        raise ValueError(f"{fn}: element_size must be 1, 2, 4, 8 or 16, got {element_size}")
    multiple = _TMA_ALIGNMENT_BYTES // element_size
    return ceil_div(x, multiple) * multiple


def get_mn_major_tma_aligned_tensor(scale: ArrayLike) -> jax.Array:
    """A scale [..., MN, kb] ready for the kernels: float32, logical shape kept (see the module docstring)."""
    fn = "get_mn_major_tma_aligned_tensor"
    shape = check.as_array(fn, "scale", scale).shape
    if len(shape) not in (2, 3):
        raise ValueError(f"{fn}: scale must be [MN, kb] or [G, MN, kb], got shape {shape}")
    return check.scale(fn, "scale", scale, {"[..., MN, kb]": shape})


def transform_sf_into_required_layout(sf: ArrayLike, mn: int, k: int, recipe: tuple[int, ...] = (1, 128, 128),
                                      num_groups: int | None = None, is_sfa: bool = False) -> jax.Array:
    """Checks a scale-factor tensor against its recipe and returns it as the GEMMs take it (float32).

    recipe is (gran_m, gran_n, gran_k) for the pair (A uses gran_m, B gran_n) or a per-operand (gran_mn, gran_k);
    the expected shape is [num_groups?, ceil(mn / gran_mn), ceil(k / gran_k)].
    """
    fn = "transform_sf_into_required_layout"
    mn, k = check.static_int(fn, "mn", mn, 1), check.static_int(fn, "k", k, 1)
    is_sfa = check.static_bool(fn, "is_sfa", is_sfa)
    if not isinstance(recipe, (tuple, list)):
        raise ValueError(f"{fn}: recipe must be (gran_m, gran_n, gran_k) or (gran_mn, gran_k), got {recipe!r}")
    recipe = tuple(check.static_int(fn, f"recipe[{i}]", r, 1) for i, r in enumerate(recipe))
    if len(recipe) == 3:
        gran_mn, gran_k = (recipe[0] if is_sfa else recipe[1]), recipe[2]
    elif len(recipe) == 2:
        gran_mn, gran_k = recipe
    else:
        raise ValueError(f"{fn}: recipe must be (gran_m, gran_n, gran_k) or (gran_mn, gran_k), got {recipe}")
    if gran_k != BLOCK or gran_mn not in (1, BLOCK):
        raise ValueError(f"{fn}: supported granularities are 1x128 and 128x128, got ({gran_mn}, {gran_k})")
    lead = () if num_groups is None else (check.static_int(fn, "num_groups", num_groups, 1),)
    shape = lead + (ceil_div(mn, gran_mn), ceil_div(k, gran_k))
    return check.scale(fn, "sf", sf, {f"recipe {recipe}": shape})
