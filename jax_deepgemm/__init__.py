"""jax_deepgemm: DeepGEMM-class FP8 GEMMs with fine-grained scaling for JAX.

Dense and MoE grouped FP8 GEMMs (1x128 activation scales, 128x128 or 1x128 weight scales, FP32 promotion every 128
K) as JAX primitives: Hopper (sm_90) kernels JIT-compiled behind XLA FFI custom calls, and a pure-JAX reference with
the same semantics everywhere else. README.md gives an overview; each function's docstring its contract.
"""

import os as _os

from jax.extend import source_info_util as _source_info_util

from .aot import warmup
from .differentiable import CHECKPOINT_NAMES, fp8_dot, fp8_dots_saveable, ragged_dot
from .gemm import fp8_gemm_nn, fp8_gemm_nt, fp8_gemm_tn, fp8_gemm_tt
from .grouped import (
    fp8_grouped_gemm_nt,
    k_grouped_fp8_gemm_nt_contiguous,
    m_grouped_fp8_gemm_nt_contiguous,
    m_grouped_fp8_gemm_nt_masked,
)
from .kernels import export_disabled_checks
from .layout import (
    get_m_alignment_for_contiguous_layout,
    get_mn_major_tma_aligned_tensor,
    get_tma_aligned_size,
    transform_sf_into_required_layout,
)
from .quantization import ceil_to_ue8m0, dequantize, per_block_cast_to_fp8, per_token_cast_to_fp8
from .runtime import get_num_sms, register_ffi_targets, set_num_sms
from .testing import calc_diff

__version__ = "0.1.0"

register_ffi_targets()  # for programs that hold our calls without this process lowering one (jax.export)

# Like JAX's own, our frames stay out of the Python stacks JAX records for a program's locations: they point at the
# caller's code (tests/test_sharding.py checks the lowered program's). Our frames there also met a loop in XLA's call
# inliner (the gradient of ragged_dot under an Explicit mesh axis, compiled after its forward, at one stack depth:
# NOTES 166).
_source_info_util.register_exclusion(_os.path.dirname(_os.path.abspath(__file__)))

__all__ = [
    "CHECKPOINT_NAMES",
    "calc_diff",
    "ceil_to_ue8m0",
    "dequantize",
    "export_disabled_checks",
    "fp8_dot",
    "fp8_dots_saveable",
    "fp8_gemm_nn",
    "fp8_gemm_nt",
    "fp8_gemm_tn",
    "fp8_gemm_tt",
    "fp8_grouped_gemm_nt",
    "get_m_alignment_for_contiguous_layout",
    "get_mn_major_tma_aligned_tensor",
    "get_num_sms",
    "get_tma_aligned_size",
    "k_grouped_fp8_gemm_nt_contiguous",
    "m_grouped_fp8_gemm_nt_contiguous",
    "m_grouped_fp8_gemm_nt_masked",
    "per_block_cast_to_fp8",
    "per_token_cast_to_fp8",
    "ragged_dot",
    "register_ffi_targets",
    "set_num_sms",
    "transform_sf_into_required_layout",
    "warmup",
]
