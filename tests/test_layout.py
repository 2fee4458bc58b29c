"""Layout utilities: contiguous-layout alignment, TMA-aligned sizes, the scale-layout helpers (whose output every GEMM
accepts) and the SM cap."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
import oracle
from conftest import BF16, F32, UE8M0, assert_matches, q_lhs, q_lhs_batched, q_rhs, q_rhs_batched, randn
from jax_deepgemm import runtime


def test_m_alignment():
    assert dg.get_m_alignment_for_contiguous_layout() == 128
    assert isinstance(dg.get_m_alignment_for_contiguous_layout(), int)


@pytest.mark.parametrize("x,element_size,expected", [
    (1, 1, 16), (16, 1, 16), (17, 1, 32), (0, 4, 0), (1, 4, 4), (4, 4, 4), (5, 4, 8), (130, 4, 132),
    (3, 2, 8), (8, 2, 8), (9, 2, 16), (3, 8, 4), (1, 16, 1), (7, 16, 7), (4096, 4, 4096), (4097, 4, 4100),
])
def test_get_tma_aligned_size(x, element_size, expected):
    got = dg.get_tma_aligned_size(x, element_size)
    assert got == expected and isinstance(got, int)
    assert got * element_size % 16 == 0 and got >= x and (got - x) * element_size < 16


def test_mn_major_tma_aligned_tensor_feeds_every_gemm():
    m, n, k, g = 3, 130, 200, 2
    a, b = q_lhs(randn(1, (m, k))), q_rhs(randn(2, (n, k)))
    sa = dg.get_mn_major_tma_aligned_tensor(a[1])
    sb = dg.get_mn_major_tma_aligned_tensor(b[1])
    assert sa.dtype == F32 and sa.shape == a[1].shape
    np.testing.assert_array_equal(np.asarray(sa), np.asarray(a[1]))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    ref, bound = oracle.gemm(a64, b64), oracle.gemm_bound(a64, b64)
    assert_matches(dg.fp8_gemm_nt((a[0], sa), (b[0], sb), out_dtype=F32), ref, bound, F32)
    assert_matches(dg.fp8_gemm_tn((a[0].T, sa), (b[0].T, sb)), ref, bound, BF16)
    # grouped (3-D scales), UE8M0 input comes back as float32 holding the same values
    bg = q_rhs_batched(randn(3, (g, n, k)), ue8m0=True)
    sbg = dg.get_mn_major_tma_aligned_tensor(bg[1].astype(UE8M0))
    assert sbg.shape == (g, 2, 2) and sbg.dtype == F32
    np.testing.assert_array_equal(np.asarray(sbg), np.asarray(bg[1]))
    sizes = jnp.asarray([1, 2], jnp.int32)
    out = dg.fp8_grouped_gemm_nt((a[0], sa), (bg[0], sbg), sizes, out_dtype=F32)
    bg64 = oracle.dequant_rhs(*bg)
    assert_matches(out, oracle.ragged(a64, bg64, sizes), oracle.ragged(a64, bg64, sizes, oracle.gemm_bound), F32)
    am = q_lhs_batched(randn(4, (g, m, k)))
    sam = dg.get_mn_major_tma_aligned_tensor(am[1])
    out = dg.m_grouped_fp8_gemm_nt_masked((am[0], sam), (bg[0], sbg), jnp.asarray([3, 3], jnp.int32), 3)
    am64 = oracle.dequant_lhs(*am)
    assert_matches(out, oracle.masked(am64, bg64), oracle.masked(am64, bg64, oracle.gemm_bound), BF16)
    # jit-able
    np.testing.assert_array_equal(np.asarray(jax.jit(dg.get_mn_major_tma_aligned_tensor)(a[1])), np.asarray(a[1]))


@pytest.mark.parametrize("shape", [(4,), (1, 1, 4, 2), ()])
def test_mn_major_rejects_wrong_rank(shape):
    with pytest.raises(ValueError, match=r"get_mn_major_tma_aligned_tensor.*scale"):
        dg.get_mn_major_tma_aligned_tensor(jnp.ones(shape, F32))


def test_transform_sf_into_required_layout_feeds_the_gemms():
    m, n, k, g = 5, 130, 300, 2
    a, b = q_lhs(randn(5, (m, k))), q_rhs(randn(6, (n, k)))
    b_rows = q_lhs(randn(6, (n, k)))
    sfa = dg.transform_sf_into_required_layout(a[1], m, k, (1, 128, 128), is_sfa=True)
    sfb = dg.transform_sf_into_required_layout(b[1], n, k, (1, 128, 128), is_sfa=False)
    sfb_rows = dg.transform_sf_into_required_layout(b_rows[1], n, k, (1, 128))  # per-operand recipe: 1x128
    sfb_blk = dg.transform_sf_into_required_layout(b[1], n, k, (128, 128))  # per-operand recipe: 128x128
    for s, src in ((sfa, a[1]), (sfb, b[1]), (sfb_rows, b_rows[1]), (sfb_blk, b[1])):
        assert s.dtype == F32 and s.shape == src.shape
        np.testing.assert_array_equal(np.asarray(s), np.asarray(src))
    a64 = oracle.dequant_lhs(*a)
    for bb, s in ((b, sfb), (b_rows, sfb_rows)):
        b64 = oracle.dequant_rhs(*bb)
        assert_matches(dg.fp8_gemm_nt((a[0], sfa), (bb[0], s), out_dtype=F32), oracle.gemm(a64, b64),
                       oracle.gemm_bound(a64, b64), F32)
    # grouped, with num_groups, UE8M0 in
    bg = q_rhs_batched(randn(7, (g, n, k)), ue8m0=True)
    sfbg = dg.transform_sf_into_required_layout(bg[1].astype(UE8M0), n, k, (1, 128, 128), num_groups=g)
    assert sfbg.shape == (g, 2, 3) and sfbg.dtype == F32
    ids = jnp.asarray([0, 1, -1, 1, 0], jnp.int32)
    out = dg.m_grouped_fp8_gemm_nt_contiguous((a[0], sfa), (bg[0], sfbg), ids, out_dtype=F32)
    bg64 = oracle.dequant_rhs(*bg)
    assert_matches(out, oracle.contiguous(a64, bg64, ids), oracle.contiguous(a64, bg64, ids, oracle.gemm_bound), F32)


@pytest.mark.parametrize("sf_shape,mn,k,recipe,kwargs", [
    ((5, 3), 5, 300, (1, 128, 128), {"is_sfa": False}),   # B with 128-row blocks expects (1, 3)
    ((1, 3), 5, 300, (1, 128, 128), {"is_sfa": True}),    # A per token expects (5, 3)
    ((5, 2), 5, 300, (1, 128), {}),                        # kb off by one
    ((2, 5, 3), 5, 300, (1, 128), {"num_groups": 3}),     # group count off
    ((5, 3), 5, 300, (1, 128), {"num_groups": 1}),        # missing group dim
])
def test_transform_sf_rejects_wrong_shapes(sf_shape, mn, k, recipe, kwargs):
    with pytest.raises(ValueError, match=r"transform_sf_into_required_layout: sf has shape"):
        dg.transform_sf_into_required_layout(jnp.ones(sf_shape, F32), mn, k, recipe, **kwargs)


def test_num_sms_round_trip(restore_num_sms):
    default = dg.get_num_sms()
    assert isinstance(default, int) and default >= 1
    if not runtime.cuda_devices():
        assert default == runtime.DEFAULT_NUM_SMS
    dg.set_num_sms(8)
    assert dg.get_num_sms() == 8
    dg.set_num_sms(1)
    assert dg.get_num_sms() == 1
    dg.set_num_sms(default + 1000)  # a cap above the device's count leaves the device's count
    assert dg.get_num_sms() == default
    dg.set_num_sms(default)
    assert dg.get_num_sms() == default
    for bad in (0, -1):
        with pytest.raises(ValueError, match="set_num_sms"):
            dg.set_num_sms(bad)
    assert dg.get_num_sms() == default  # a rejected value changes nothing
    # The cap reaches a function lowered before at its next call (JAX would reuse its cached lowering)
    gemm = lambda a, b: dg.fp8_gemm_nt(a, b)  # noqa: E731
    shapes = ((jax.ShapeDtypeStruct((64, 256), jnp.float8_e4m3fn), jax.ShapeDtypeStruct((64, 2), F32)),
              (jax.ShapeDtypeStruct((128, 256), jnp.float8_e4m3fn), jax.ShapeDtypeStruct((1, 2), F32)))
    cap_lowered = lambda: re.findall(r"sms_cap = (\d+)",  # noqa: E731
                                     jax.jit(gemm).trace(*shapes).lower(lowering_platforms=("cuda",)).as_text())
    assert cap_lowered() == [str(default)]
    dg.set_num_sms(6)
    assert cap_lowered() == ["6"]
    # GEMMs keep working under a cap (on the reference it changes nothing)
    dg.set_num_sms(4)
    a, b = q_lhs(randn(8, (3, 130))), q_rhs(randn(9, (7, 130)))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    assert_matches(dg.fp8_gemm_nt(a, b, out_dtype=F32), oracle.gemm(a64, b64), oracle.gemm_bound(a64, b64), F32)


def test_num_sms_restored_after_round_trip():
    """Runs after test_num_sms_round_trip in file order: the fixture put the default back."""
    expected = min((getattr(d, "core_count", runtime.DEFAULT_NUM_SMS) for d in runtime.cuda_devices()),
                   default=runtime.DEFAULT_NUM_SMS)
    assert dg.get_num_sms() == expected
