"""The dense FP8 kernel on an sm_90 GPU against the float64 oracle: a sweep of shapes (tiny, odd, DeepSeek-V3),
every option, output poisoned with NaN before each launch (DG_POISON_OUTPUTS), under jit, twice in a row (kernel
cache), inside lax.scan (command buffers), and through fp8_dot's FP8 backward.

Skipped, saying why, unless an sm_90 GPU is present.
"""

import os

os.environ["DG_POISON_OUTPUTS"] = "1"  # read when XLA compiles each program below: set before the first compile

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from conftest import (BF16, E5M2, F32, UE8M0, assert_matches, assert_overwrite_c_changes_no_bit, cosine, q_lhs,  # noqa
                      q_rhs, randn, seed_of)

import jax_deepgemm as dg  # noqa: E402
import oracle  # noqa: E402
from jax_deepgemm import runtime  # noqa: E402

_SM90 = [d for d in runtime.cuda_devices() if runtime.is_sm90(d)]
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not _SM90, reason="needs an sm_90 GPU (H100/H200); none is present here")]

SHAPES = [  # (M, N, K): tiny, odd, DeepSeek-V3's dense shapes, 256 x 128 tiles in clusters over long K,
    # 128 x 4096 x 7168 (split K on an H200 only: its bandwidth), and N % 8 == 4 (no TMA store; the register stores
    # of 128-wide tiles, the H200's choice here, 8 bytes wide: NOTES 107)
    (1, 16, 16), (1, 2112, 7168), (3, 130, 200), (7, 131, 129), (64, 2112, 7168), (128, 24576, 1536),
    (128, 7168, 16384), (130, 150, 200), (257, 4096, 7168), (1000, 7168, 2048), (4096, 2112, 7168),
    (4096, 7168, 2048), (4096, 32768, 512), (2304, 3072, 16384), (128, 4096, 7168), (1000, 1540, 2048),
]


def _operands(m, n, k, per_row=False, ue8m0=False):
    x = randn(seed_of("x", m, n, k), (m, k))
    w = randn(seed_of("w", m, n, k), (n, k))
    a = q_lhs(x, ue8m0=ue8m0, scale_dtype=UE8M0 if ue8m0 else None)
    b = (q_lhs if per_row else q_rhs)(w, ue8m0=ue8m0, scale_dtype=UE8M0 if ue8m0 else None)
    return a, b


def _expected(a, b, c=None):
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    return oracle.gemm(a64, b64, c), oracle.gemm_bound(a64, b64, c)


def _program_uses_kernel(fn, *args) -> bool:
    return "jdg_fp8_gemm" in jax.jit(fn).lower(*args).as_text()


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_dense_sweep(m, n, k):
    a, b = _operands(m, n, k)
    fn = jax.jit(dg.fp8_gemm_nt)
    assert _program_uses_kernel(dg.fp8_gemm_nt, a, b)
    expected, bound = _expected(a, b)
    out = fn(a, b)
    assert_matches(out, expected, bound, BF16)
    again = fn(a, b)  # second call: the executable and the loaded kernel are reused
    np.testing.assert_array_equal(np.asarray(again.astype(F32)), np.asarray(out.astype(F32)))


# Rows that are not 128-byte multiples (K % 128 != 0) take clusters from 12 K blocks on, at any M and at one wave too
# (heuristics.cc, step 5): K = 2000 (rows crossing 32-byte sectors), 1504, and 7000 (padded to 7008 bytes), each one
# wave of 128-row tiles on an H100; and N = 16, a single N block, whose 9 M blocks the clusters' CTAs pair along M
# (kLoneColumn with no paired column: the last pair's second tile is past M).
@pytest.mark.parametrize("m,n,k", [(512, 2048, 2000), (1024, 1024, 1504), (2304, 640, 7000), (1100, 16, 1504)])
def test_dense_unaligned_rows_in_clusters(m, n, k):
    c = runtime.extension().select_fp8_gemm_config(m, n, -(-k // 16) * 16, runtime.get_num_sms())
    assert c["cluster"] == 2, c
    a, b = _operands(m, n, k)
    expected, bound = _expected(a, b)
    assert_matches(jax.jit(dg.fp8_gemm_nt)(a, b), expected, bound, BF16)


# The balanced grid (heuristics.cc, step 14): 11 x 32 = 352 tiles of 256 x 128 over 32 K blocks take three rounds on
# 128 CTAs (whole band rows of 16) of an H100's 132.
def test_dense_balanced_grid():
    m, n, k = 2816, 4096, 4096
    sms = runtime.get_num_sms()
    c = runtime.extension().select_fp8_gemm_config(m, n, k, sms)
    assert (c["block_m"], c["tiles"], c["waves"]) == (256, 352, -(-352 // sms)), c
    assert c["grid"] == (sms // 16 * 16 if -(-352 // (sms // 16 * 16)) == c["waves"] else sms), c
    a, b = _operands(m, n, k)
    expected, bound = _expected(a, b)
    assert_matches(jax.jit(dg.fp8_gemm_nt)(a, b), expected, bound, BF16)


# Step 21 (heuristics.cc): a short last round of dense tiles over long K split over K by pairs of CTAs, by default:
# 128 x 192 tiles (half-width groups) on 2048 x 2112 x 7168 (176 = 132 + 44 tiles), 256 x 128 on 2560 x 4096 x 4096
# (320 = 2 x 132 + 56); step 22: a single round so split, 66 tiles of 128 x 192 on 384 x 4096 x 7168, 48 of 128 x
# 128 (the accumulator pipeline) on 512 x 1536 x 7168, and with M tails 65 of 128 x 160 (half-width groups) on 600 x
# 2048 x 7168, 66 of 256 x 64 on 500 x 2112 x 14336, 48 of 128 x 64 on 370 x 1024 x 7168; FP32 out with C too.
@pytest.mark.parametrize("m,n,k,tile", [(2048, 2112, 7168, (128, 192)), (2560, 4096, 4096, (256, 128)),
                                        (384, 4096, 7168, (128, 192)), (512, 1536, 7168, (128, 128)),
                                        (600, 2048, 7168, (128, 160)), (500, 2112, 14336, (256, 64)),
                                        (370, 1024, 7168, (128, 64))])
@pytest.mark.parametrize("c_dtype", [None, F32])
def test_dense_short_last_round_split(m, n, k, tile, c_dtype):
    sms = runtime.get_num_sms()
    c = runtime.extension().select_fp8_gemm_config(m, n, k, sms)
    if sms == 132:  # (the tile counts above)
        assert (c["block_m"], c["block_n"], c["tail_split"], c["cluster"]) == (*tile, True, 1), c
    a, b = _operands(m, n, k)
    c_in = None if c_dtype is None else randn(seed_of("c", m, n), (m, n), c_dtype)
    out_dtype = c_dtype or BF16
    expected, bound = _expected(a, b, c_in)
    out = jax.jit(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=out_dtype))(a, b, c_in)
    assert_matches(out, expected, bound, out_dtype)


@pytest.mark.parametrize("out_dtype", [BF16, F32])
@pytest.mark.parametrize("c_dtype", [None, BF16, F32])
@pytest.mark.parametrize("per_row", [False, True])
def test_dense_options(out_dtype, c_dtype, per_row):
    m, n, k = 300, 520, 1000
    a, b = _operands(m, n, k, per_row=per_row)
    c = None if c_dtype is None else randn(seed_of("c", m, n), (m, n), c_dtype)
    expected, bound = _expected(a, b, c)
    out = jax.jit(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=out_dtype))(a, b, c)
    assert_matches(out, expected, bound, out_dtype)


# 300 x 520 x 1000: test_dense_options' problem (128 x 16 tiles); 64 x 2112 x 7168 splits K; 2560 x 4096 x 4096
# takes the tail split (test_dense_short_last_round_split); 1024 x 768 x 2048, 128 x 64 tiles of bf16 (with C, no
# kernel takes the TMA store: each thread adds its C before it stores D there). The picks at 132 SMs are asserted.
@pytest.mark.parametrize("m,n,k,c_dtype,pick", [(300, 520, 1000, F32, (128, 16, 1, False)),
                                                (300, 520, 1000, BF16, (128, 16, 1, False)),
                                                (64, 2112, 7168, F32, (64, 32, 2, False)),
                                                (2560, 4096, 4096, F32, (256, 128, 1, True)),
                                                (1024, 768, 2048, BF16, (128, 64, 1, False))])
def test_dense_overwrite_c(m, n, k, c_dtype, pick):
    sms = runtime.get_num_sms()
    cfg = runtime.extension().select_fp8_gemm_config(m, n, k, sms, out_f32=c_dtype == F32, c_kind=2 if c_dtype == F32
                                                     else 1, hbm_gbs=runtime.get_hbm_gbs())
    assert not cfg["tma_store"], cfg
    if sms == 132:  # (block_m, block_n, split_k, tail_split) as the comment above says
        assert (cfg["block_m"], cfg["block_n"], cfg["split_k"], cfg["tail_split"]) == pick, cfg
    a, b = _operands(m, n, k)
    c = randn(seed_of("c-over", m, n), (m, n), c_dtype)
    expected, bound = _expected(a, b, c)
    gemm = lambda a, b, c, over: dg.fp8_gemm_nt(a, b, c=c, out_dtype=c_dtype, overwrite_c=over)  # noqa: E731
    assert_matches(jax.jit(gemm, static_argnums=3)(a, b, c, True), expected, bound, c_dtype)
    assert_overwrite_c_changes_no_bit(gemm, (a, b), c)


@pytest.mark.parametrize("m,n,k", [(2048, 1024, 4096), (1024, 768, 2048)], ids=["register_stores", "tma_store"])
def test_dense_bf16_out_is_the_f32_result_rounded(m, n, k):
    """fp8_dot's weight gradient of bf16 weights asks the kernel for bf16 (per-row B scales, the 1D1D recipe): each
    float32 sum rounded once to nearest even, bit for bit what the float32 result's astype gives. On these shapes the
    heuristics pick the same tiles for both outputs (checked first), so the sums are the same; bf16 takes register
    stores (16 bytes per lane) on the first and the TMA-store epilogue on the second."""
    ext = runtime.extension()
    cfg = {out_f32: ext.select_fp8_gemm_config(m, n, k, runtime.get_num_sms(), b_scale_per_row=True, out_f32=out_f32,
                                               hbm_gbs=runtime.get_hbm_gbs()) for out_f32 in (True, False)}
    assert {key for key in cfg[True] if cfg[True][key] != cfg[False][key]} <= {"tma_store", "smem_bytes"}, cfg
    assert cfg[False]["tma_store"] == ((m, n, k) == (1024, 768, 2048)), cfg
    a, b = _operands(m, n, k, per_row=True)
    out_f32 = jax.jit(lambda a, b: dg.fp8_gemm_nt(a, b, out_dtype=F32))(a, b)
    out = jax.jit(lambda a, b: dg.fp8_gemm_nt(a, b, out_dtype=BF16))(a, b)
    np.testing.assert_array_equal(np.asarray(out).view(np.uint16), np.asarray(out_f32.astype(BF16)).view(np.uint16))
    assert_matches(out, *_expected(a, b), BF16)


# C with an odd N (the register epilogue's elementwise C loads, and stores shifted to each row's alignment, or
# elementwise in bf16 tiles whose width is not a multiple of 32, NOTES 36 / 41 / 108-110) and an M tail, both C types.
@pytest.mark.parametrize("c_dtype", [BF16, F32])
def test_dense_c_with_odd_n(c_dtype):
    m, n, k = 300, 517, 640
    a, b = _operands(m, n, k)
    c = randn(seed_of("c", m, n), (m, n), c_dtype)
    expected, bound = _expected(a, b, c)
    out = jax.jit(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=c_dtype))(a, b, c)
    assert_matches(out, expected, bound, c_dtype)


def test_dense_ue8m0_and_e5m2():
    m, n, k = 200, 384, 768
    a, b = _operands(m, n, k, ue8m0=True)
    expected, bound = _expected(a, b)
    assert_matches(jax.jit(dg.fp8_gemm_nt)(a, b), expected, bound, BF16)
    a5, b5 = (a[0].astype(F32).astype(E5M2), a[1]), (b[0].astype(F32).astype(E5M2), b[1])
    expected, bound = _expected(a5, b5)
    assert_matches(jax.jit(dg.fp8_gemm_nt)(a5, b5), expected, bound, BF16)


@pytest.mark.parametrize("layout", ["nn", "tn", "tt"])
def test_dense_layouts(layout):
    m, n, k = 256, 448, 640
    a, b = _operands(m, n, k)
    expected, bound = _expected(a, b)
    a_data = a[0].T if layout[0] == "t" else a[0]
    b_data = b[0] if layout[1] == "t" else b[0].T
    fn = getattr(dg, f"fp8_gemm_{layout}")
    assert_matches(jax.jit(fn)((a_data, a[1]), (b_data, b[1])), expected, bound, BF16)


def test_dense_inside_scan():
    """Several launches inside one jitted lax.scan: XLA may capture them in a command buffer (CUDA graph)."""
    steps, m, n, k = 6, 192, 640, 512
    xs = randn(seed_of("scan"), (steps, m, k))
    a_steps = jax.vmap(dg.per_token_cast_to_fp8)(xs)
    b = q_rhs(randn(seed_of("scan-w"), (n, k)))

    @jax.jit
    def run(a_steps, b):
        def body(carry, a):
            d = dg.fp8_gemm_nt(a, b, out_dtype=F32)
            return carry + d.sum(), d
        return jax.lax.scan(body, jnp.zeros((), F32), a_steps)

    total, outs = run(a_steps, b)
    for i in range(steps):
        expected, bound = _expected((a_steps[0][i], a_steps[1][i]), b)
        assert_matches(outs[i], expected, bound, F32)
    np.testing.assert_allclose(float(total), float(np.sum(np.asarray(outs, np.float64))), rtol=1e-4)


@pytest.mark.parametrize("m,n,k,block_m", [(512, 2112, 1024, 256), (300, 256, 384, 128)],
                         ids=["256_rows", "128_rows_pipelined"])
def test_profile_waits_build_computes_and_reports(m, n, k, block_m, monkeypatch, capfd):
    """DG_PROFILE_WAITS (tools/gpu_session.sh waits) builds a kernel that times its barrier waits; a second kernel
    prints them after every launch. The profiled kernel must still compute the right result, and each CTA's consumer
    and producer must report once per launch."""
    for name, value in [("DG_PROFILE_WAITS", "1"), ("DG_TUNE_BLOCK_M", str(block_m)), ("DG_TUNE_BLOCK_N", "128")]:
        monkeypatch.setenv(name, value)
    a, b = _operands(m, n, k)
    out = jax.jit(lambda a, b: dg.fp8_gemm_nt(a, b))(a, b)  # a new program: the variables are read when it compiles
    jax.block_until_ready(out)
    expected, bound = _expected(a, b)
    assert_matches(out, expected, bound, BF16)
    capfd_out = capfd.readouterr().out.splitlines()
    lines = [ln for ln in capfd_out if ln.startswith("jax_deepgemm waits: cta ")]
    consumers = [ln for ln in lines if "consumer (full stages)" in ln]
    second = [ln for ln in lines if "consumer1 (full stages)" in ln]  # BLOCK_M >= 128: two consumer warpgroups
    producers = [ln for ln in lines if "producer (empty stages)" in ln]
    config = runtime.extension().select_fp8_gemm_config(m, n, k, runtime.get_num_sms())
    assert config["block_m"] == block_m, config
    assert len(consumers) == len(second) == len(producers) == config["grid"], lines[:6]
    # each consumer warpgroup's K blocks add up to tiles x K blocks per tile
    for role in (consumers, second):
        assert sum(int(ln.split(", ")[-1].split()[0]) for ln in role) == config["tiles"] * -(-k // 128), lines[:6]
    # the two-wave K loop's timeline (256-row tiles; benchmarks/experiments/wave_trace.py): each traced wave of CTA
    # 0's warpgroups is issued, done and promoted in that order; at each tile's start (benchmarks/experiments/
    # tile_gaps.py) the previous epilogue is done (K block 255, none before the first tile), then the first stage is
    # about to be waited for (253) and waited for (254), before the tile's first wgmmas are issued
    traced = [ln.split() for ln in capfd_out if ln.startswith("jax_deepgemm trace: cta 0 wg ")]
    assert bool(traced) == (block_m == 256), traced[:3]
    for wg in ("0", "1") if traced else ():
        events, boundaries = {}, {}
        for *_, w, t, tag in traced:
            if w != wg:
                continue
            tile, kb = int(tag) // 4096, int(tag) // 16 % 256
            if kb >= 253:
                assert int(tag) % 16 == 3, tag
                boundaries.setdefault(tile, {})[kb] = int(t)
            else:
                events.setdefault(int(tag) // 4, []).append((int(tag) % 4, int(t)))
        assert events, f"no trace of warpgroup {wg}"
        for wave, evs in events.items():
            assert [e for e, _ in evs] == [0, 1, 2] and evs[0][1] <= evs[1][1] <= evs[2][1], (wg, wave, evs)
        for tile, marks in boundaries.items():  # (the trace's last events may be cut off by its length)
            issue = dict(events.get(tile * 1024, [])).get(0)  # K block 0, wave 0
            assert issue is None or set(marks) == ({253, 254} if tile == 0 else {253, 254, 255}), (wg, tile, marks)
            order = [marks[kb] for kb in (255, 253, 254) if kb in marks] + ([issue] if issue is not None else [])
            assert order == sorted(order), (wg, tile, marks, issue)


@pytest.mark.parametrize("m,n,k", [(4096, 7168, 2048), (1000, 2112, 7168), (128, 7168, 16384)])
def test_ffma_hint_pass_changes_no_bit(m, n, k, monkeypatch):
    """The JIT's FFMA hint pass (ffi/sass_hints.h) rewrites scheduling hints and reuse flags only: kernels compiled
    with it (the default) and without it (DG_JIT_FFMA_YIELD_PERIOD=0) compute the same bits (on 132 SMs: 256 x 128,
    256 x 64 and 128 x 64 tiles)."""
    a, b = _operands(m, n, k)
    outs = []
    for period in ("0", None):
        if period is None:
            monkeypatch.delenv("DG_JIT_FFMA_YIELD_PERIOD", raising=False)
        else:
            monkeypatch.setenv("DG_JIT_FFMA_YIELD_PERIOD", period)
        outs.append(np.asarray(jax.jit(lambda a, b: dg.fp8_gemm_nt(a, b))(a, b)).view(np.uint16))
    np.testing.assert_array_equal(outs[0], outs[1])
    expected, bound = _expected(a, b)
    assert_matches(outs[1].view(jnp.bfloat16), expected, bound, BF16)


def test_fp8_dot_gradients_on_gpu():
    x = randn(seed_of("dot-x"), (512, 1024), BF16, spread=False)
    w = randn(seed_of("dot-w"), (1024, 768), BF16, spread=False) / 32

    def loss(dot, x, w):
        return jnp.mean(jnp.square(dot(x, w).astype(F32)))

    grads = jax.jit(jax.grad(lambda x, w: loss(dg.fp8_dot, x, w), argnums=(0, 1)))(x, w)
    x32, w32 = x.astype(F32), w.astype(F32)
    with jax.default_matmul_precision("highest"):
        ref = jax.grad(lambda x, w: loss(jnp.dot, x, w), argnums=(0, 1))(x32, w32)
    for got, want in zip(grads, ref):
        assert cosine(got, want) > 0.995
