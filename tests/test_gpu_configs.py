"""Every kind of kernel configuration on the GPU, whatever the heuristics would pick: BLOCK_M 64, 128 and 256 (two
64-row waves per consumer warpgroup), without and with clusters of 2 (A multicast), and the TMA-store epilogue,
forced with DG_TUNE_BLOCK_M, DG_TUNE_CLUSTER and DG_TUNE_TMA_STORE on representative cases of every mode, against
the float64 oracle, outputs poisoned. The configuration is chosen when XLA compiles a program, so each case clears
JAX's caches first.

Skipped, saying why, unless an sm_90 GPU is present.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import test_gpu_dense as dense
import test_gpu_grouped as grouped  # sets DG_POISON_OUTPUTS before anything compiles
from conftest import BF16, F32, assert_matches, q_lhs_batched, q_rhs, randn, seed_of

import jax_deepgemm as dg
import oracle

pytestmark = grouped.pytestmark
CONFIGS = [(64, 1), (128, 2), (256, 1), (256, 2)]  # (BLOCK_M, cluster)


@pytest.fixture(params=CONFIGS, ids=lambda c: f"bm{c[0]}-x{c[1]}")
def config(request, monkeypatch):
    block_m, cluster = request.param
    monkeypatch.setenv("DG_TUNE_BLOCK_M", str(block_m))
    monkeypatch.setenv("DG_TUNE_CLUSTER", str(cluster))
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    jax.clear_caches()
    yield request.param
    jax.clear_caches()  # later tests compile with the heuristics' own choice


def _check_config(capfd, kind, config):
    """The kernel of the last `kind` call had the forced configuration (a cluster wherever the N blocks pair up)."""
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if f"jax_deepgemm: {kind} " in line]
    assert lines, err[-2000:]
    fields = dict(re.findall(r"(\w+)=(\d+)", lines[-1]))
    block_m, cluster = config
    n_blocks = -(-int(fields["n"]) // int(fields["block_n"]))
    assert int(fields["block_m"]) == block_m, lines[-1]
    assert int(fields["cluster"]) == (cluster if n_blocks % 2 == 0 else 1), lines[-1]


@pytest.mark.parametrize("m,n,k", [(1000, 7168, 2048), (300, 130, 200), (257, 384, 1024)])
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_dense(config, capfd, m, n, k, out_dtype):
    m += out_dtype == F32  # a problem of its own: the configuration line is printed once per problem and config
    a, b = dense._operands(m, n, k)
    c = randn(seed_of("bm-c", m, n), (m, n), out_dtype)
    expected, bound = dense._expected(a, b, c)
    out = jax.jit(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=out_dtype))(a, b, c)
    _check_config(capfd, "fp8_gemm", config)
    assert_matches(out, expected, bound, out_dtype)


def _dense_per_row_scales():
    m, n, k = 520, 272, 640
    a, b = dense._operands(m, n, k, per_row=True)
    expected, bound = dense._expected(a, b)
    assert_matches(jax.jit(dg.fp8_gemm_nt)(a, b), expected, bound, BF16)


def test_dense_per_row_scales(config, capfd):
    _dense_per_row_scales()
    _check_config(capfd, "fp8_gemm", config)


@pytest.mark.parametrize("name", ["ids_change_inside_blocks", "aligned_runs_and_padding", "garbage_32bit"])
def test_contiguous(config, capfd, name):
    grouped.test_contiguous(name)
    _check_config(capfd, "m_grouped_contiguous", config)


@pytest.mark.parametrize("name", ["skewed_and_empty", "sizes_1_to_300", "sum_overflows_int32"])
def test_ragged(config, capfd, name):
    grouped.test_ragged(name)
    _check_config(capfd, "grouped_ragged", config)


def test_ragged_per_row_scales(config, capfd):
    grouped.test_ragged_f32_out_and_per_row_scales(True)
    _check_config(capfd, "grouped_ragged", config)


@pytest.mark.parametrize("name", ["m_not_multiple_of_block", "expected_m_1"])
def test_masked(config, capfd, name):
    grouped.test_masked(name)
    _check_config(capfd, "m_grouped_masked", config)


def test_masked_rows_straddling_waves(config, capfd):
    # masked_m ends inside the second 64-row wave of a 256-row tile, inside the first, and on a wave boundary
    g, m, n, k = 4, 512, 192, 384
    a = q_lhs_batched(randn(seed_of("bm-masked", g, m, k), (g, m, k)))
    b = grouped._rhs(g, n, k, "bm-masked")
    masked_m = jnp.asarray([200, 37, 320, 512], jnp.int32)
    out = jax.jit(lambda a, b, mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, 256))(a, b, masked_m)
    _check_config(capfd, "m_grouped_masked", config)
    a64, b64 = grouped._deq(a, b)
    assert_matches(out, oracle.masked(a64, b64), oracle.masked(a64, b64, fn=oracle.gemm_bound), BF16,
                   rows=oracle.masked_valid(masked_m, g, m))


@pytest.mark.parametrize("name", ["skewed_and_empty", "m_and_n_tails"])
def test_k_grouped(config, capfd, name):
    grouped.test_k_grouped(name, with_c=True)
    _check_config(capfd, "k_grouped", config)


def test_inside_scan(config):
    grouped.test_grouped_inside_scan()  # command buffers with each tile height


# ---------------------------------------------------------------------------------------- TMA-store epilogue
# Only bf16 output without C, dense or contiguous, whole 64-column atoms, N % 8 == 0 (fp8_gemm_tma_store_supported).

def _forced_tile(request, monkeypatch):
    block_m, block_n, on = request.param
    monkeypatch.setenv("DG_TUNE_BLOCK_M", str(block_m))
    monkeypatch.setenv("DG_TUNE_BLOCK_N", str(block_n))
    monkeypatch.setenv("DG_TUNE_TMA_STORE", str(on))
    monkeypatch.setenv("DG_PRINT_CONFIGS", "1")
    jax.clear_caches()
    yield request.param
    jax.clear_caches()


@pytest.fixture(params=[(128, 192, 1), (256, 128, 1), (256, 64, 1), (256, 128, 0)],
                ids=lambda c: f"bm{c[0]}-bn{c[1]}-tma{c[2]}")
def tma_store(request, monkeypatch):
    """The TMA-store epilogue with 3, 2 and 1 column atoms per tile, and the register epilogue in its place."""
    yield from _forced_tile(request, monkeypatch)


@pytest.fixture(params=[(64, 128, 1), (128, 64, 1), (256, 128, 1)], ids=lambda c: f"bm{c[0]}-bn{c[1]}-tma{c[2]}")
def tma_store_per_row(request, monkeypatch):
    """The same with 1x128 B scales (widths up to 176, 128 at 256 rows), whose stages are released after the
    promotion rather than before it."""
    yield from _forced_tile(request, monkeypatch)


def _check_tma_store(capfd, kind, params):
    """The last `kind` kernel had the forced tile and epilogue (every case here has N % 8 == 0)."""
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if f"jax_deepgemm: {kind} " in line]
    assert lines, err[-2000:]
    fields = dict(re.findall(r"(\w+)=(\d+)", lines[-1]))
    block_m, block_n, on = params
    assert (int(fields["block_m"]), int(fields["block_n"])) == (block_m, block_n), lines[-1]
    assert int(fields["n"]) % 8 == 0 and int(fields["tma_store"]) == on, lines[-1]


@pytest.mark.parametrize("m,n,k", [(1000, 7168, 2048), (257, 384, 1024), (300, 136, 200), (4096 + 64, 2048, 512),
                                   (130, 4096, 640)])
def test_tma_store_dense(tma_store, capfd, m, n, k):
    # M tails inside a tile, N tails inside a 64-column atom and whole atoms past N, several tiles per CTA
    a, b = dense._operands(m, n, k)
    expected, bound = dense._expected(a, b)
    out = jax.jit(dg.fp8_gemm_nt)(a, b)
    _check_tma_store(capfd, "fp8_gemm", tma_store)
    assert_matches(out, expected, bound, BF16)
    np.testing.assert_array_equal(np.asarray(jax.jit(dg.fp8_gemm_nt)(a, b).astype(F32)), np.asarray(out.astype(F32)))


def test_tma_store_dense_per_row_scales(tma_store_per_row, capfd):
    _dense_per_row_scales()
    _check_tma_store(capfd, "fp8_gemm", tma_store_per_row)


@pytest.mark.parametrize("name", ["all_padding", "garbage_32bit", "ids_change_inside_blocks", "ids_change_at_64",
                                  "skewed_one_expert_g16"])
def test_tma_store_contiguous(tma_store, capfd, name):
    grouped.test_contiguous(name)
    _check_tma_store(capfd, "m_grouped_contiguous", tma_store)


def test_tma_store_inside_scan(tma_store, capfd):
    """Launches in a command buffer, each storing while the next one's main loop may already run."""
    steps, m, n, k = 5, 640, 384, 512
    xs = randn(seed_of("tma-scan"), (steps, m, k))
    a_steps = jax.vmap(dg.per_token_cast_to_fp8)(xs)
    b = q_rhs(randn(seed_of("tma-scan-w"), (n, k)))
    run = jax.jit(lambda a_steps, b: jax.lax.scan(lambda c, a: (c, dg.fp8_gemm_nt(a, b)), 0, a_steps)[1])
    outs = run(a_steps, b)
    _check_tma_store(capfd, "fp8_gemm", tma_store)
    b64 = oracle.dequant_rhs(*b)
    for i in range(steps):
        a64 = oracle.dequant_lhs(a_steps[0][i], a_steps[1][i])
        assert_matches(outs[i], oracle.gemm(a64, b64), oracle.gemm_bound(a64, b64), BF16)
