"""Every tile height on the GPU, whatever the heuristics would pick: BLOCK_M 64, 128 and 256 (two 64-row waves per
consumer warpgroup) forced with DG_TUNE_BLOCK_M on representative cases of every mode, against the float64 oracle,
outputs poisoned. The configuration is chosen when XLA compiles a program, so each case clears JAX's caches first.

Skipped, saying why, unless an sm_90 GPU is present.
"""

import jax
import jax.numpy as jnp
import pytest
import test_gpu_dense as dense
import test_gpu_grouped as grouped  # sets DG_POISON_OUTPUTS before anything compiles
from conftest import BF16, F32, assert_matches, q_lhs_batched, randn, seed_of

import jax_deepgemm as dg
import oracle

pytestmark = grouped.pytestmark
BLOCK_MS = [64, 128, 256]


@pytest.fixture(params=BLOCK_MS, ids=lambda bm: f"bm{bm}")
def block_m(request, monkeypatch):
    monkeypatch.setenv("DG_TUNE_BLOCK_M", str(request.param))
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    jax.clear_caches()
    yield request.param
    jax.clear_caches()  # later tests compile with the heuristics' own choice


def _config_line(capfd, kind):
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if f"jax_deepgemm: {kind} " in line]
    assert lines, err[-2000:]
    return lines[-1]


@pytest.mark.parametrize("m,n,k", [(1000, 7168, 2048), (300, 130, 200), (257, 384, 1024)])
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_dense(block_m, capfd, m, n, k, out_dtype):
    m += out_dtype == F32  # a problem of its own: the configuration line is printed once per problem and config
    a, b = dense._operands(m, n, k)
    c = randn(seed_of("bm-c", m, n), (m, n), out_dtype)
    expected, bound = dense._expected(a, b, c)
    out = jax.jit(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=out_dtype))(a, b, c)
    assert f"block_m={block_m} " in _config_line(capfd, "fp8_gemm")
    assert_matches(out, expected, bound, out_dtype)


def test_dense_per_row_scales(block_m, capfd):
    m, n, k = 520, 272, 640
    a, b = dense._operands(m, n, k, per_row=True)
    expected, bound = dense._expected(a, b)
    out = jax.jit(dg.fp8_gemm_nt)(a, b)
    assert f"block_m={block_m} " in _config_line(capfd, "fp8_gemm")
    assert_matches(out, expected, bound, BF16)


@pytest.mark.parametrize("name", ["ids_change_inside_blocks", "aligned_runs_and_padding", "garbage_32bit"])
def test_contiguous(block_m, capfd, name):
    grouped.test_contiguous(name)
    assert f"block_m={block_m} " in _config_line(capfd, "m_grouped_contiguous")


@pytest.mark.parametrize("name", ["skewed_and_empty", "sizes_1_to_300", "sum_overflows_int32"])
def test_ragged(block_m, capfd, name):
    grouped.test_ragged(name)
    assert f"block_m={block_m} " in _config_line(capfd, "grouped_ragged")


def test_ragged_per_row_scales(block_m, capfd):
    grouped.test_ragged_f32_out_and_per_row_scales(True)
    assert f"block_m={block_m} " in _config_line(capfd, "grouped_ragged")


@pytest.mark.parametrize("name", ["m_not_multiple_of_block", "expected_m_1"])
def test_masked(block_m, capfd, name):
    grouped.test_masked(name)
    assert f"block_m={block_m} " in _config_line(capfd, "m_grouped_masked")


def test_masked_rows_straddling_waves(block_m, capfd):
    # masked_m ends inside the second 64-row wave of a 256-row tile, inside the first, and on a wave boundary
    g, m, n, k = 4, 512, 192, 384
    a = q_lhs_batched(randn(seed_of("bm-masked", g, m, k), (g, m, k)))
    b = grouped._rhs(g, n, k, "bm-masked")
    masked_m = jnp.asarray([200, 37, 320, 512], jnp.int32)
    out = jax.jit(lambda a, b, mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, 256))(a, b, masked_m)
    assert f"block_m={block_m} " in _config_line(capfd, "m_grouped_masked")
    a64, b64 = grouped._deq(a, b)
    assert_matches(out, oracle.masked(a64, b64), oracle.masked(a64, b64, fn=oracle.gemm_bound), BF16,
                   rows=oracle.masked_valid(masked_m, g, m))


@pytest.mark.parametrize("name", ["skewed_and_empty", "m_and_n_tails"])
def test_k_grouped(block_m, capfd, name):
    grouped.test_k_grouped(name, with_c=True)
    assert f"block_m={block_m} " in _config_line(capfd, "k_grouped")


def test_inside_scan(block_m):
    grouped.test_grouped_inside_scan()  # command buffers with each tile height
