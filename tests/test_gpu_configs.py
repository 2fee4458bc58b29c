"""Every kind of kernel configuration on the GPU, whatever the heuristics would pick: BLOCK_M 64, 128 and 256 (two
64-row waves per consumer warpgroup), without and with clusters of 2 (A or B multicast), the accumulator pipeline,
the accumulator pipeline's stages in pairs, the TMA-store epilogue, half-width wgmma groups, split K, the tail split,
contiguous segments and C pulled into L2, forced with DG_TUNE_BLOCK_M / _BLOCK_N, DG_TUNE_CLUSTER,
DG_TUNE_MULTICAST_B, DG_TUNE_ACC_PIPELINE, DG_TUNE_PAIRED_STAGES, DG_TUNE_TMA_STORE, DG_TUNE_SPLIT_HALVES,
DG_TUNE_SPLIT_K, DG_TUNE_TAIL_SPLIT, DG_TUNE_SEGMENTS and DG_TUNE_C_PREFETCH on representative cases of every mode,
against the float64 oracle, outputs poisoned. The configuration is chosen when XLA compiles a program, so each case
clears JAX's caches first.

Skipped, saying why, unless an sm_90 GPU is present.
"""

import contextlib
import itertools
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
# (BLOCK_M, cluster, accumulator pipeline: 0 off, 1 on with one K block per stage round, 2 on with paired stages); the
# pipeline takes tiles up to 128 x 128, so its cases force BLOCK_N 128
CONFIGS = [(64, 1, 0), (128, 2, 0), (256, 1, 0), (256, 2, 0), (64, 1, 1), (128, 1, 1), (64, 1, 2), (128, 1, 2)]


_PRINT_GENERATION = itertools.count(1)


@contextlib.contextmanager
def _forced(monkeypatch, **env):
    """Programs compiled inside see these DG_TUNE_* settings and print their configuration lines (a new value of
    DG_PRINT_CONFIGS each time: a line an earlier test printed is printed again). The configuration is chosen when
    XLA compiles a program, so JAX's caches are cleared on the way in and out."""
    for name, value in {**env, "DG_PRINT_CONFIGS": next(_PRINT_GENERATION)}.items():
        monkeypatch.setenv(name, str(value))
    jax.clear_caches()
    yield
    jax.clear_caches()  # later tests compile with the heuristics' own choice


def _configs(capfd, kind):
    """The configuration lines of the `kind` kernels compiled since the last read, each with its numeric fields."""
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if f"jax_deepgemm: {kind} " in line]
    assert lines, err[-2000:]
    return [(line, {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", line)}) for line in lines]


def _last_config(capfd, kind):
    """The configuration line of the last `kind` kernel compiled, and its numeric fields."""
    return _configs(capfd, kind)[-1]


@pytest.fixture(params=CONFIGS, ids=lambda c: f"bm{c[0]}-x{c[1]}" + ["", "-pipe", "-pipe-paired"][c[2]])
def config(request, monkeypatch):
    block_m, cluster, pipeline = request.param
    # one accumulator unless asked for (the heuristics' default, two wherever they apply, is what the other files test)
    tile_n = {"DG_TUNE_BLOCK_N": 128, "DG_TUNE_ACC_PIPELINE": 1} if pipeline else {"DG_TUNE_ACC_PIPELINE": 0}
    with _forced(monkeypatch, DG_TUNE_BLOCK_M=block_m, DG_TUNE_CLUSTER=cluster, DG_TUNE_PAIRED_STAGES=int(pipeline == 2),
                 **tile_n):
        yield request.param


def _check_config(capfd, kind, config):
    """The kernel of the last `kind` call had the forced configuration (dense: a cluster always; grouped: wherever
    the N blocks pair up)."""
    line, fields = _last_config(capfd, kind)
    block_m, cluster, pipeline = config
    pairs = kind == "fp8_gemm" or -(-fields["n"] // fields["block_n"]) % 2 == 0
    assert fields["block_m"] == block_m and fields["acc_pipeline"] == (pipeline > 0), line
    # paired stages need at least 4 (a problem of one or two K blocks gets fewer)
    assert fields["paired_stages"] == (pipeline == 2 and fields["stages"] >= 4), line
    assert fields["cluster"] == (cluster if pairs else 1), line


def _dense_plain(m, n, k):
    """fp8_gemm_nt without C under jit against the oracle; the operands, for further checks."""
    a, b = dense._operands(m, n, k)
    expected, bound = dense._expected(a, b)
    out = jax.jit(dg.fp8_gemm_nt)(a, b)
    assert_matches(out, expected, bound, BF16)
    return a, b, out


# One representative case per grouped mode, by the kernel kind its configuration line names.
GROUPED_CASES = {
    "m_grouped_contiguous": lambda: grouped.test_contiguous("ids_change_inside_blocks"),
    "grouped_ragged": lambda: grouped.test_ragged("skewed_and_empty"),
    "m_grouped_masked": lambda: grouped.test_masked("m_not_multiple_of_block"),
    "k_grouped": lambda: grouped.test_k_grouped("skewed_and_empty", with_c=True),
}


def _dense_per_row_scales():
    m, n, k = 520, 272, 640
    a, b = dense._operands(m, n, k, per_row=True)
    expected, bound = dense._expected(a, b)
    assert_matches(jax.jit(dg.fp8_gemm_nt)(a, b), expected, bound, BF16)


# K-block counts 16, 2, 8, 1, 3, 7: the accumulator pipeline's prologue and both of its tails
@pytest.mark.parametrize("m,n,k", [(1000, 7168, 2048), (300, 130, 200), (257, 384, 1024), (200, 256, 128),
                                   (333, 192, 384), (130, 640, 896)])
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_dense(config, capfd, m, n, k, out_dtype):
    m += out_dtype == F32  # a problem of its own: the configuration line is printed once per problem and config
    a, b = dense._operands(m, n, k)
    c = randn(seed_of("bm-c", m, n), (m, n), out_dtype)
    expected, bound = dense._expected(a, b, c)
    out = jax.jit(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=out_dtype))(a, b, c)
    _check_config(capfd, "fp8_gemm", config)
    assert_matches(out, expected, bound, out_dtype)


def test_dense_per_row_scales(config, capfd):
    _dense_per_row_scales()
    _check_config(capfd, "fp8_gemm", config)


def _register_stores(monkeypatch, capfd, m, n, k, block_n, out_dtype, c_seed):
    """One dense problem in 128 x block_n tiles through the register epilogue (N % 8 != 0: no TMA store), C drawn
    from c_seed (None: no C), against the oracle."""
    a, b = dense._operands(m, n, k)
    c = randn(seed_of(c_seed, m, n), (m, n), out_dtype) if c_seed else None
    expected, bound = dense._expected(a, b, c)
    with _forced(monkeypatch, DG_TUNE_BLOCK_M=128, DG_TUNE_BLOCK_N=block_n):
        out = jax.jit(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=out_dtype))(a, b, c)
        line, fields = _last_config(capfd, "fp8_gemm")
    assert (fields["block_n"], fields["tma_store"]) == (block_n, 0), line
    assert_matches(out, expected, bound, out_dtype)


# The register epilogue's store widths (store_bf16_words, store_quad): rows of N % 8 == 4, 2, 6 and odd N (no TMA
# store: rows not 16-byte multiples), bf16 and f32 out, tile widths a multiple of 32 (bf16: the 16-byte exchange,
# shifted to the rows' alignment, store_wave_bf16x8) and not, N tails inside the last tile, an M tail, C added.
@pytest.mark.parametrize("n", [1540, 1538, 1542, 1537])
@pytest.mark.parametrize("block_n", [128, 144])
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_dense_store_widths(monkeypatch, capfd, n, block_n, out_dtype):
    _register_stores(monkeypatch, capfd, 300, n, 640, block_n, out_dtype, "widths-c")


# Rows that are not 16-byte multiples, stored shifted to each row's alignment with units taken from the next lane
# (store_pieces_shifted). bf16 (N % 8 != 0) in tiles of whole chunk quads: one per tile (32: the row's first and last
# lane in the same quad), 2, 4 and 6; f32 (N % 4 != 0) in the store layout's chunk pairs: 1 (16), 3, 5, 8, 9, 12. N
# below one tile (7, 13), a last tile of one column (1537); C or none; odd N, and bf16 N % 4 == 0 and 2 (2116, 1538:
# rows at 8- and 4-byte offsets), f32 N % 4 == 2 (1538, 1542).
@pytest.mark.parametrize("n,block_n,with_c,out_dtype", [
    (7, 32, True, BF16), (13, 64, False, BF16), (1541, 64, True, BF16), (1537, 128, False, BF16),
    (1543, 192, True, BF16), (1539, 32, False, BF16), (2116, 192, False, BF16), (1538, 64, True, BF16),
    (7, 16, True, F32), (13, 48, False, F32), (1541, 80, True, F32), (1537, 128, False, F32),
    (1543, 144, True, F32), (1539, 16, False, F32), (1538, 192, True, F32), (1542, 96, False, F32)])
def test_dense_shifted_stores(monkeypatch, capfd, n, block_n, with_c, out_dtype):
    _register_stores(monkeypatch, capfd, 270, n, 384, block_n, out_dtype, "shifted-c" if with_c else None)


# skewed_one_expert_g16: whole tiles of one expert, which take the K loop without the row-selecting promotion
@pytest.mark.parametrize("name", ["ids_change_inside_blocks", "aligned_runs_and_padding", "garbage_32bit",
                                  "skewed_one_expert_g16"])
def test_contiguous(config, capfd, name):
    grouped.test_contiguous(name)
    _check_config(capfd, "m_grouped_contiguous", config)


def test_contiguous_nan_padding(config, capfd):
    grouped.test_contiguous_nan_padding_beside_one_expert()
    _check_config(capfd, "m_grouped_contiguous", config)


@pytest.mark.parametrize("name", ["skewed_and_empty", "sizes_1_to_300", "sum_overflows_int32",
                                  "200_groups_walked_in_windows"])
def test_ragged(config, capfd, name):
    grouped.test_ragged(name)
    _check_config(capfd, "grouped_ragged", config)


def test_ragged_per_row_scales(config, capfd):
    grouped.test_ragged_f32_out_and_per_row_scales(True)
    _check_config(capfd, "grouped_ragged", config)


@pytest.mark.parametrize("name", ["m_not_multiple_of_block", "expected_m_1", "96_groups_walked_in_windows"])
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


# DG_TUNE_SEGMENTS=1: contiguous 256-row tiles walk segments, the runs of 128-row blocks whose first rows have the
# same expert id (fp8_gemm_tiles.cuh; the heuristics take it over long K only, which these cases are not): every
# case, alone and in clusters of 2; a segment of an odd block count ends in a tile that owns 128 rows (the TMA store
# for its first warpgroup only). The other forced 256-row cases here run the fixed grid.
@pytest.mark.parametrize("cluster", [1, 2])
@pytest.mark.parametrize("name", list(grouped.CONTIGUOUS))
def test_contiguous_segments(monkeypatch, capfd, cluster, name):
    with _forced(monkeypatch, DG_TUNE_BLOCK_M=256, DG_TUNE_CLUSTER=cluster, DG_TUNE_SEGMENTS=1):
        grouped.test_contiguous(name)
    line, fields = _last_config(capfd, "m_grouped_contiguous")
    assert (fields["block_m"], fields["tail_split"], fields["segments"]) == (256, 0, 1), line


# ---------------------------------------------------------------------------------------- B multicast
# Dense clusters that share B: the two CTAs take adjacent M blocks of one N block (odd M-block counts leave the last
# pair's second tile past M), each loading half of the B tile for both; the default for tiles wider than tall.

@pytest.fixture(params=[(128, 192, 1), (128, 160, 0), (128, 128, 1), (256, 64, 1), (64, 96, 0)],
                ids=lambda c: f"bm{c[0]}-bn{c[1]}-tma{c[2]}")
def multicast_b(request, monkeypatch):
    block_m, block_n, tma = request.param
    with _forced(monkeypatch, DG_TUNE_BLOCK_M=block_m, DG_TUNE_BLOCK_N=block_n, DG_TUNE_TMA_STORE=tma,
                 DG_TUNE_CLUSTER=2, DG_TUNE_MULTICAST_B=1):
        yield request.param


# M blocks odd and even, M tails, N tails, one K block, several tiles per CTA
@pytest.mark.parametrize("m,n,k", [(1000, 2112, 2048), (300, 400, 128), (257, 384, 1024), (4096 + 64, 1024, 512)])
def test_multicast_b_dense(multicast_b, capfd, m, n, k):
    _dense_plain(m, n, k)
    line, fields = _last_config(capfd, "fp8_gemm")
    assert (fields["block_m"], fields["block_n"], fields["cluster"]) == (*multicast_b[:2], 2), line
    assert "(B multicast)" in line, line


def test_multicast_b_with_c_and_f32_out(multicast_b, capfd):
    m, n, k = 333, 640, 896
    a, b = dense._operands(m, n, k)
    c = randn(seed_of("mb-c", m, n), (m, n), F32)
    expected, bound = dense._expected(a, b, c)
    out = jax.jit(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=F32))(a, b, c)
    assert "(B multicast)" in _last_config(capfd, "fp8_gemm")[0]
    assert_matches(out, expected, bound, F32)


# ---------------------------------------------------------------------------------------- TMA-store epilogue
# Only bf16 output without C, N % 8 == 0 (fp8_gemm_tma_store_supported); ragged, masked and k-grouped tiles take it
# only when all their rows are theirs, the others keep the register epilogue.

@pytest.fixture(params=[(128, 192, 1), (256, 128, 1), (256, 64, 1), (128, 160, 1), (128, 48, 1), (256, 128, 0)],
                ids=lambda c: f"bm{c[0]}-bn{c[1]}-tma{c[2]}")
def tma_store(request, monkeypatch):
    """The TMA-store epilogue with 3, 2 and 1 64-column atoms per tile, 5 of 32 columns and 3 of 16
    (fp8_gemm_d_atom_cols), and the register epilogue in its place."""
    block_m, block_n, on = request.param
    with _forced(monkeypatch, DG_TUNE_BLOCK_M=block_m, DG_TUNE_BLOCK_N=block_n, DG_TUNE_TMA_STORE=on):
        yield request.param


@pytest.fixture(params=[(64, 128, 1), (128, 64, 1), (256, 128, 1), (128, 176, 1)],
                ids=lambda c: f"bm{c[0]}-bn{c[1]}-tma{c[2]}")
def tma_store_per_row(request, monkeypatch):
    """The same with 1x128 B scales (widths up to 176, 128 at 256 rows), whose stages are released after the
    promotion rather than before it."""
    block_m, block_n, on = request.param
    with _forced(monkeypatch, DG_TUNE_BLOCK_M=block_m, DG_TUNE_BLOCK_N=block_n, DG_TUNE_TMA_STORE=on):
        yield request.param


def _check_tma_store(capfd, kind, params):
    """The last `kind` kernel had the forced tile and epilogue (every case here has N % 8 == 0)."""
    line, fields = _last_config(capfd, kind)
    block_m, block_n, on = params
    assert (fields["block_m"], fields["block_n"]) == (block_m, block_n), line
    assert fields["n"] % 8 == 0 and fields["tma_store"] == on, line


@pytest.mark.parametrize("m,n,k", [(1000, 7168, 2048), (257, 384, 1024), (300, 136, 200), (4096 + 64, 2048, 512),
                                   (130, 4096, 640)])
def test_tma_store_dense(tma_store, capfd, m, n, k):
    # M tails inside a tile, N tails inside a 64-column atom and whole atoms past N, several tiles per CTA
    a, b, out = _dense_plain(m, n, k)
    _check_tma_store(capfd, "fp8_gemm", tma_store)
    np.testing.assert_array_equal(np.asarray(jax.jit(dg.fp8_gemm_nt)(a, b).astype(F32)), np.asarray(out.astype(F32)))


def test_tma_store_dense_per_row_scales(tma_store_per_row, capfd):
    _dense_per_row_scales()
    _check_tma_store(capfd, "fp8_gemm", tma_store_per_row)


@pytest.mark.parametrize("name", ["all_padding", "garbage_32bit", "ids_change_inside_blocks", "ids_change_at_64",
                                  "skewed_one_expert_g16"])
def test_tma_store_contiguous(tma_store, capfd, name):
    grouped.test_contiguous(name)
    _check_tma_store(capfd, "m_grouped_contiguous", tma_store)


def test_tma_store_ragged(tma_store, capfd):
    """Full tiles (TMA store) next to tiles cut by their group's end (register stores), empty groups, the zero tail."""
    m, n, k = 1200, 384, 512
    sizes = jnp.asarray([300, 256, 0, 512, 100, 0], jnp.int32)  # 1168 rows; 32 rows of zeros after them
    a, b = grouped._lhs(m, k, "tma-ragged"), grouped._rhs(6, n, k, "tma-ragged")
    out = jax.jit(dg.fp8_grouped_gemm_nt)(a, b, sizes)
    _check_tma_store(capfd, "grouped_ragged", tma_store)
    a64, b64 = grouped._deq(a, b)
    assert_matches(out, oracle.ragged(a64, b64, np.asarray(sizes)),
                   oracle.ragged(a64, b64, np.asarray(sizes), fn=oracle.gemm_bound), BF16)


def test_tma_store_masked_leaves_rows_past_the_mask(tma_store, capfd):
    """Full tiles take the TMA store; the tile the mask cuts must not write past it: those rows keep the NaN the
    output was poisoned with."""
    g, m, n, k = 3, 768, 384, 512
    a = q_lhs_batched(randn(seed_of("tma-masked", g, m, k), (g, m, k)))
    b = grouped._rhs(g, n, k, "tma-masked")
    masked_m = jnp.asarray([512, 300, 768], jnp.int32)
    out = jax.jit(lambda a, b, mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, 512))(a, b, masked_m)
    _check_tma_store(capfd, "m_grouped_masked", tma_store)
    valid = oracle.masked_valid(masked_m, g, m)
    a64, b64 = grouped._deq(a, b)
    assert_matches(out, oracle.masked(a64, b64), oracle.masked(a64, b64, fn=oracle.gemm_bound), BF16, rows=valid)
    assert np.all(np.isnan(np.asarray(out.astype(F32))[~np.asarray(valid)])), "rows past the mask were written"


@pytest.mark.parametrize("name", ["four_groups", "many_groups", "one_group"])
def test_tma_store_k_grouped(tma_store_per_row, capfd, name):
    """bf16 out: a group's last M tile (96 rows of 128 / 256) keeps the register stores where its rows end."""
    grouped.test_k_grouped_bf16_out(name)
    _check_tma_store(capfd, "k_grouped", tma_store_per_row)


def _dense_scan(steps, m, n, k, seed):
    """`steps` dense GEMMs inside lax.scan under jit (launches in a command buffer), checked against the oracle."""
    xs = randn(seed_of(seed), (steps, m, k))
    a_steps = jax.vmap(dg.per_token_cast_to_fp8)(xs)
    b = q_rhs(randn(seed_of(seed + "-w"), (n, k)))
    run = jax.jit(lambda a_steps, b: jax.lax.scan(lambda c, a: (c, dg.fp8_gemm_nt(a, b)), 0, a_steps)[1])
    outs = run(a_steps, b)
    b64 = oracle.dequant_rhs(*b)
    for i in range(steps):
        a64 = oracle.dequant_lhs(a_steps[0][i], a_steps[1][i])
        assert_matches(outs[i], oracle.gemm(a64, b64), oracle.gemm_bound(a64, b64), BF16)


def test_tma_store_inside_scan(tma_store, capfd):
    """Launches in a command buffer, each storing while the next one's main loop may already run."""
    _dense_scan(5, 640, 384, 512, "tma-scan")
    _check_tma_store(capfd, "fp8_gemm", tma_store)


# ------------------------------------------------------------------------------------ half-width wgmma groups
# DG_TUNE_SPLIT_HALVES=1 (the default where it applies, forced here on tiles the heuristics may not pick): one 64-row
# wave per warpgroup, BLOCK_N > 128, 128x128 B
# scales; its own K loop (one lo and one hi group per K block, the last K block peeled), so 1, 2 and odd K-block
# counts, tiles straddling 128-column scale blocks (160 and 192 on N not a multiple of them) and every M-grouped mode.
# The same cases with DG_TUNE_SPLIT_HALVES=0: the whole-width loop (each chunk's scale block chosen at run time).

@pytest.fixture(params=[(128, 192, 1, 1), (128, 160, 0, 1), (64, 192, 1, 1), (128, 192, 1, 0), (128, 160, 0, 0),
                        (64, 192, 0, 0)], ids=lambda c: f"bm{c[0]}-bn{c[1]}-tma{c[2]}-halves{c[3]}")
def split_halves(request, monkeypatch):
    block_m, block_n, tma, halves = request.param
    with _forced(monkeypatch, DG_TUNE_BLOCK_M=block_m, DG_TUNE_BLOCK_N=block_n, DG_TUNE_TMA_STORE=tma,
                 DG_TUNE_SPLIT_HALVES=halves):
        yield request.param


def _check_split(capfd, kind, params):
    line, fields = _last_config(capfd, kind)
    assert (fields["block_m"], fields["block_n"], fields["split_halves"]) == params[:2] + params[3:], line


@pytest.mark.parametrize("m,n,k", [(1000, 2112, 2048), (300, 400, 128), (257, 384, 256), (130, 4096, 640)])
def test_split_halves_dense(split_halves, capfd, m, n, k):
    _dense_plain(m, n, k)
    _check_split(capfd, "fp8_gemm", split_halves)


@pytest.mark.parametrize("name", ["ids_change_inside_blocks", "garbage_32bit", "skewed_one_expert_g16"])
def test_split_halves_contiguous(split_halves, capfd, name):
    grouped.test_contiguous(name)
    _check_split(capfd, "m_grouped_contiguous", split_halves)


@pytest.mark.parametrize("kind", ["grouped_ragged", "m_grouped_masked"])
def test_split_halves_grouped(split_halves, capfd, kind):
    GROUPED_CASES[kind]()
    _check_split(capfd, kind, split_halves)


# ------------------------------------------------------------------------------------ split K
# DG_TUNE_SPLIT_K=2 / 4 (dense, BLOCK_M <= 128): clusters of 2 / 4 CTAs share every tile's K blocks, the others'
# partial tiles summed in CTA 0's shared memory. K-block counts that split evenly and not (57, 8 over 4), one K block
# (three of four CTAs contribute zeros), M tails, C and FP32 out, per-row B scales, both epilogues, several tiles per
# cluster (the partial slots reused: an SM cap of 8), inside lax.scan, and the same bits on every run. 64 x 64,
# 64 x 128 and 128 x 64 over 2 are what the model picks on an H200 besides the H100's choices (NOTES 30).

@pytest.fixture(params=[(64, 32, 2, 0), (128, 64, 2, 1), (64, 64, 2, 1), (64, 128, 2, 1), (64, 64, 4, 1),
                        (128, 32, 4, 0)],
                ids=lambda c: f"bm{c[0]}-bn{c[1]}-sk{c[2]}-tma{c[3]}")
def split_k(request, monkeypatch):
    block_m, block_n, parts, tma = request.param
    with _forced(monkeypatch, DG_TUNE_BLOCK_M=block_m, DG_TUNE_BLOCK_N=block_n, DG_TUNE_SPLIT_K=parts,
                 DG_TUNE_TMA_STORE=tma):
        yield request.param


def _check_split_k(capfd, params):
    line, fields = _last_config(capfd, "fp8_gemm")
    assert (fields["block_m"], fields["block_n"], fields["split_k"], fields["cluster"]) == (*params[:3], 1), line
    return fields


@pytest.mark.parametrize("m,n,k", [(64, 2112, 7168), (200, 400, 1024), (70, 272, 1000), (130, 256, 128),
                                   (257, 384, 7296)])
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_split_k_dense(split_k, capfd, m, n, k, out_dtype):
    m += out_dtype == F32  # a problem of its own: the configuration line is printed once per problem and config
    a, b = dense._operands(m, n, k)
    c = randn(seed_of("sk-c", m, n), (m, n), out_dtype) if out_dtype == F32 else None
    expected, bound = dense._expected(a, b, c)
    fn = jax.jit(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=out_dtype))
    out = fn(a, b, c)
    _check_split_k(capfd, split_k)
    assert_matches(out, expected, bound, out_dtype)
    np.testing.assert_array_equal(np.asarray(fn(a, b, c)), np.asarray(out))  # CTA 0 adds in rank order: same bits


def test_split_k_per_row_scales(split_k, capfd):
    _dense_per_row_scales()
    _check_split_k(capfd, split_k)


def test_split_k_many_tiles_per_cluster(split_k, capfd, restore_num_sms):
    dg.set_num_sms(8)  # 8 / split_k clusters walk 13 or more tiles each, reusing the partial slots
    _dense_plain(500, 832, 2048)
    assert _check_split_k(capfd, split_k)["grid"] == 8


def test_split_k_inside_scan(split_k, capfd):
    _dense_scan(3, 96, 320, 2048, "sk-scan")
    _check_split_k(capfd, split_k)


# ---------------------------------------------------------------------------------------------------- tail split
# DG_TUNE_TAIL_SPLIT=1 (masked: the default; dense and contiguous: forced), with an SM cap of 8 so that the tile
# counts below leave a last round of at most 4 tiles (split over pairs of CTAs, the partial tile sent into the
# partner's pipeline stages) after 0, 1 or 2 whole rounds, or a round too long to split; K-block counts that split
# evenly and not, and 2 (one each); M and N tails; C and FP32 out; per-row B scales; rows past the mask untouched;
# garbage expert ids; inside lax.scan; the same bits on every run.

@pytest.fixture(params=[(128, 64, 1), (64, 96, 0), (256, 128, 1)], ids=lambda c: f"bm{c[0]}-bn{c[1]}-tma{c[2]}")
def tail_split(request, monkeypatch, restore_num_sms):
    block_m, block_n, tma = request.param
    dg.set_num_sms(8)
    # paired stages forced: the pipelined cases split their tiles' K blocks into runs of odd and even length
    with _forced(monkeypatch, DG_TUNE_BLOCK_M=block_m, DG_TUNE_BLOCK_N=block_n, DG_TUNE_TMA_STORE=tma,
                 DG_TUNE_TAIL_SPLIT=1, DG_TUNE_CLUSTER=1, DG_TUNE_SPLIT_K=1, DG_TUNE_PAIRED_STAGES=1):
        yield request.param


def _check_tail_split(capfd, kind, params, tiles=None, splits=True):
    """The last `kind` kernel had the forced tile with the tail split, and (given its tile count) whether its last
    round is split: at most half of the grid's CTAs would have a tile in it."""
    line, fields = _last_config(capfd, kind)
    block_m, block_n, tma = params
    assert (fields["block_m"], fields["block_n"], fields["tail_split"], fields["cluster"]) == (block_m, block_n, 1, 1)
    assert fields["grid"] % 2 == 0, line
    if tiles is not None:
        left = tiles % fields["grid"]
        assert (0 < left <= fields["grid"] // 2) == splits, (tiles, line)


# (M blocks, N blocks, K, M tail, N tail, splits): 18 tiles = 2 rounds + 2; 3 tiles alone (grid 6); 10 = 1 round + 2;
# 13 = 1 round + 5 (not split); 1 tile over two K blocks
TAIL_DENSE = [(3, 6, 1152, 37, 24, True), (1, 3, 1000, 0, 0, True), (2, 5, 7296, 5, 0, True),
              (1, 13, 1024, 0, 16, False), (1, 1, 256, 1, 1, True)]


@pytest.mark.parametrize("case", TAIL_DENSE, ids=lambda c: f"{c[0]}x{c[1]}-k{c[2]}")
@pytest.mark.parametrize("out_dtype", [BF16, F32])
def test_tail_split_dense(tail_split, capfd, case, out_dtype):
    m_blocks, n_blocks, k, m_tail, n_tail, splits = case
    # F32 out: a problem of its own (one row fewer, the same tile count)
    m, n = m_blocks * tail_split[0] - m_tail - (out_dtype == F32), n_blocks * tail_split[1] - n_tail
    a, b = dense._operands(m, n, k)
    c = randn(seed_of("tail-c", m, n), (m, n), out_dtype) if out_dtype == F32 else None
    expected, bound = dense._expected(a, b, c)
    fn = jax.jit(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=out_dtype))
    out = fn(a, b, c)
    _check_tail_split(capfd, "fp8_gemm", tail_split, m_blocks * n_blocks, splits)
    assert_matches(out, expected, bound, out_dtype)
    np.testing.assert_array_equal(np.asarray(fn(a, b, c)), np.asarray(out))  # CTA 0 adds the partial: same bits


def test_tail_split_dense_per_row_scales(tail_split, capfd):
    m, n, k = 3 * tail_split[0] - 9, 6 * tail_split[1], 1408  # 18 tiles, 11 K blocks
    a, b = dense._operands(m, n, k, per_row=True)
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_lhs(*b)
    out = jax.jit(dg.fp8_gemm_nt)(a, b)
    _check_tail_split(capfd, "fp8_gemm", tail_split, 18)
    assert_matches(out, oracle.gemm(a64, b64), oracle.gemm_bound(a64, b64), BF16)


@pytest.mark.parametrize("split_all", [False, True])
def test_tail_split_masked(tail_split, capfd, split_all):
    """5 M blocks x 4 N blocks = 2 rounds + 4 tiles, or 1 M block x 4 (every tile split); the rows past each mask
    keep the NaN the output was poisoned with."""
    bm, bn, _ = tail_split
    g, m, n, k = 3, 2 * bm, 4 * bn - 8, 1920 + 128 * split_all  # a problem of its own: its configuration line
    a = q_lhs_batched(randn(seed_of("tail-masked", g, m, k), (g, m, k)))
    b = grouped._rhs(g, n, k, "tail-masked")
    masked_m = [1, 0, -7] if split_all else [np.iinfo(np.int32).max, bm // 2 + 3, bm + 1]  # the first clamps to m
    masked_m = jnp.asarray(masked_m, jnp.int32)
    fn = jax.jit(lambda a, b, mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, bm))
    out = fn(a, b, masked_m)
    m_blocks = 1 if split_all else 2 + 1 + 2
    _check_tail_split(capfd, "m_grouped_masked", tail_split, m_blocks * 4)
    valid = oracle.masked_valid(masked_m, g, m)
    a64, b64 = grouped._deq(a, b)
    assert_matches(out, oracle.masked(a64, b64), oracle.masked(a64, b64, fn=oracle.gemm_bound), BF16, rows=valid)
    assert np.all(np.isnan(np.asarray(out.astype(F32))[~np.asarray(valid)])), "rows past the mask were written"
    np.testing.assert_array_equal(np.asarray(fn(a, b, masked_m).astype(F32))[np.asarray(valid)],
                                  np.asarray(out.astype(F32))[np.asarray(valid)])


def test_tail_split_contiguous(tail_split, capfd):
    """5 M blocks x 4 N blocks of garbage and valid expert ids: every tile's passes are split alike."""
    bm, bn, _ = tail_split
    m, g, n, k = 5 * bm - 10, 5, 4 * bn, 1536
    ids = jnp.asarray(grouped._garbage_ids(m, g, 7))
    a, b = grouped._lhs(m, k, "tail-contiguous"), grouped._rhs(g, n, k, "tail-contiguous")
    out = jax.jit(dg.m_grouped_fp8_gemm_nt_contiguous)(a, b, ids)
    _check_tail_split(capfd, "m_grouped_contiguous", tail_split, 20)
    a64, b64 = grouped._deq(a, b)
    assert_matches(out, oracle.contiguous(a64, b64, np.asarray(ids)),
                   oracle.contiguous(a64, b64, np.asarray(ids), fn=oracle.gemm_bound), BF16)


def test_tail_split_inside_scan(tail_split, capfd):
    grouped.test_grouped_inside_scan()  # masked launches (random masked_m) in a command buffer
    _check_tail_split(capfd, "m_grouped_masked", tail_split)


# ---------------------------------------------------------------------------------------- C prefetch
# DG_TUNE_C_PREFETCH=D: each tile's C block pulled into L2 D K blocks before its end (k-grouped: D = 1 by default, which
# test_gpu_grouped.py runs). Forced on dense GEMMs with C of both types (M and N tails; D past a tile's K blocks at
# K = 1000 with D = 12), in split K, and on k-grouped 128-row tiles with hostile sizes (some K segments empty).

@pytest.mark.parametrize("d", [1, 12])
@pytest.mark.parametrize("c_dtype", [BF16, F32])
def test_c_prefetch_dense(monkeypatch, capfd, c_dtype, d):
    with _forced(monkeypatch, DG_TUNE_C_PREFETCH=d):
        dense.test_dense_options(c_dtype, c_dtype, False)  # 300 x 520 x 1000
    line, fields = _last_config(capfd, "fp8_gemm")
    assert fields["c_prefetch"] == d, line


def test_c_prefetch_split_k(monkeypatch, capfd):
    with _forced(monkeypatch, DG_TUNE_C_PREFETCH=2, DG_TUNE_SPLIT_K=2, DG_TUNE_BLOCK_M=64, DG_TUNE_BLOCK_N=64):
        dense.test_dense_options(F32, F32, True)
    line, fields = _last_config(capfd, "fp8_gemm")
    assert (fields["c_prefetch"], fields["split_k"]) == (2, 2), line


@pytest.mark.parametrize("sizes,checked", [([512, -7, 256, 256], [0, 2, 3]), ([100, 412, 256, 256], [3])])
def test_c_prefetch_k_grouped(monkeypatch, capfd, sizes, checked):
    with _forced(monkeypatch, DG_TUNE_C_PREFETCH=3, DG_TUNE_BLOCK_M=128):
        grouped.test_k_grouped_hostile_sizes(sizes, checked, grouped.K_GROUPED_HOSTILE_SHAPES[0])  # one wave
    # its first kernel is the one with C (the bf16-out one after it has no C to prefetch)
    line, fields = _configs(capfd, "k_grouped")[0]
    assert (fields["c_prefetch"], fields["block_m"]) == (3, 128), line


# -------------------------------------------------------------------------------------------------- dynamic tiles
# DG_TUNE_DYNAMIC_TILES=1 (the default for contiguous, ragged and k-grouped GEMMs, forced here on every mode;
# benchmarks/NOTES.md 134, 144): past the first round each cluster takes the next tile from its call site's counter,
# which the last cluster to finish resets. With an SM cap of 8 most tiles are handed out that way: every mode with and
# without clusters (each CTA's tile ids' warp takes it, in a cluster of 2 CTA 0's handing it to CTA 1's by st.async;
# NOTES 147), the ragged and masked walks over hostile sizes, each program run three times in a row (the
# counter must start from zero at every launch), and launches inside lax.scan (a command buffer replays them).
# DG_TUNE_DYNAMIC_TILES=0 keeps the static order's contiguous kernels (the tile ids' warp walking the CTA's own tiles)
# tested too.

@pytest.fixture(params=[1, 2], ids=lambda c: f"x{c}")
def dynamic_tiles(request, monkeypatch, restore_num_sms):
    dg.set_num_sms(8)
    with _forced(monkeypatch, DG_TUNE_DYNAMIC_TILES=1, DG_TUNE_CLUSTER=request.param, DG_TUNE_TAIL_SPLIT=0):
        yield request.param


DYNAMIC_CASES = {
    "grouped_ragged": [lambda: grouped.test_ragged("skewed_and_empty"),
                       lambda: grouped.test_ragged("200_groups_walked_in_windows"),
                       lambda: grouped.test_ragged("sum_overflows_int32")],
    "m_grouped_masked": [lambda: grouped.test_masked("96_groups_walked_in_windows"),
                         lambda: grouped.test_masked("int32_extremes")],
    "m_grouped_contiguous": [lambda: grouped.test_contiguous("ids_change_inside_blocks")],
    "k_grouped": [lambda: grouped.test_k_grouped("skewed_and_empty", with_c=True)],
    "fp8_gemm": [lambda: _dense_plain(1000, 2048, 1024), lambda: _dense_per_row_scales()],
}


@pytest.mark.parametrize("kind", list(DYNAMIC_CASES))
def test_dynamic_tiles(dynamic_tiles, capfd, kind):
    for case in DYNAMIC_CASES[kind]:
        for _ in range(3):
            case()
    for line, fields in _configs(capfd, kind):
        assert fields["dynamic_tiles"] == 1, line


@pytest.mark.parametrize("cluster", [1, 2], ids=lambda c: f"x{c}")
def test_static_tiles_contiguous(monkeypatch, restore_num_sms, capfd, cluster):
    dg.set_num_sms(8)
    with _forced(monkeypatch, DG_TUNE_DYNAMIC_TILES=0, DG_TUNE_CLUSTER=cluster):
        grouped.test_contiguous("ids_change_inside_blocks")
        grouped.test_contiguous("garbage_32bit")
    for line, fields in _configs(capfd, "m_grouped_contiguous"):
        assert fields["dynamic_tiles"] == 0, line


def test_dynamic_tiles_inside_scan(dynamic_tiles, capfd):
    grouped.test_grouped_inside_scan()
    _dense_scan(5, 640, 384, 512, "dt-scan")
    lines = [line for line in capfd.readouterr().err.splitlines() if "jax_deepgemm: " in line and "block_m=" in line]
    assert any("grouped_ragged" in line for line in lines) and any("fp8_gemm" in line for line in lines), lines
    assert all("dynamic_tiles=1" in line for line in lines), lines
