"""The grouped FP8 kernels (contiguous, ragged, masked, k-grouped) on an sm_90 GPU against the float64 oracle: skewed, empty
and one-token groups, groups of 1..300 rows, every kind of wrong device data (garbage ids, negative and huge sizes
and masks, sums past M), expert ids changing inside a 128-row block; outputs poisoned with NaN before each launch
(DG_POISON_OUTPUTS), so every row the contract defines must be written; each family also inside a jitted lax.scan
(command buffers).

Skipped, saying why, unless an sm_90 GPU is present.
"""

import os

os.environ["DG_POISON_OUTPUTS"] = "1"  # read when XLA compiles each program below: set before the first compile

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from conftest import (BF16, F32, INT32_MAX, INT32_MIN, assert_matches, assert_overwrite_c_changes_no_bit,  # noqa
                      cosine, q_lhs, q_lhs_batched, q_rhs_batched, randn, seed_of)

import jax_deepgemm as dg  # noqa: E402
import oracle  # noqa: E402
from jax_deepgemm import runtime  # noqa: E402

_SM90 = [d for d in runtime.cuda_devices() if runtime.is_sm90(d)]
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not _SM90, reason="needs an sm_90 GPU (H100/H200); none is present here")]


def _lhs(m, k, seed):
    return q_lhs(randn(seed_of("lhs", m, k, seed), (m, k)))


def _rhs(g, n, k, seed, per_row=False):
    x = randn(seed_of("rhs", g, n, k, seed), (g, n, k))
    return q_lhs_batched(x) if per_row else q_rhs_batched(x)


def _deq(a, b):
    return oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)


def _uses_kernel(fn, *args, grouping) -> bool:
    return f'grouping = "{grouping}"' in jax.jit(fn).lower(*args).as_text()


def _default_config(grouping, m, n, k, g, **kw) -> dict:
    """The configuration the heuristics pick for this GPU (heuristics.cc), whatever DG_TUNE_* settings the caller
    runs under: test_gpu_configs.py runs these cases with forced configurations, and a case's check that it covers
    a default path is about the heuristics' own pick."""
    forced = {name: os.environ.pop(name) for name in list(os.environ) if name.startswith("DG_TUNE_")}
    try:
        return runtime.extension().select_fp8_gemm_config(m, n, k, runtime.get_num_sms(), grouping=grouping,
                                                          num_groups=g, **kw)
    finally:
        os.environ.update(forced)


# ---------------------------------------------------------------------------------------------------- contiguous

def _runs(*runs, pad=0):
    return np.asarray([e for e, r in runs for _ in range(r)] + [-1] * pad, np.int32)


def _short_runs(m, g, seed):
    """Runs of 128-row blocks of one id each, 1-3 blocks long, ids in [-1, g] or INT32_MAX, a run of 64 rows now and
    then (ids changing inside a block)."""
    rng = np.random.default_rng(seed)
    runs = []
    while sum(r for _, r in runs) < m:
        expert = int(rng.choice([rng.integers(-1, g + 1), INT32_MAX]))
        runs.append((expert, 64 if rng.random() < 0.1 else 128 * int(rng.integers(1, 4))))
    return _runs(*runs)[:m]


def _garbage_ids(m, g, seed):
    """Random 32-bit ids (nearly all invalid), with a few valid ones sprinkled in."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(INT32_MIN, INT32_MAX, size=m, dtype=np.int64, endpoint=True).astype(np.int32)
    valid = rng.random(m) < 0.3
    ids[valid] = rng.integers(0, g, size=int(valid.sum()))
    return ids


CONTIGUOUS = {
    # name: (M, G, N, K, ids)
    "aligned_runs_and_padding": (640, 4, 130, 200, _runs((0, 128), (2, 256), (3, 128), pad=128)),
    "padding_inside_runs": (512, 4, 130, 200, np.asarray([0] * 100 + [-1] * 28 + [2] * 128 + [1] * 5 + [-1] * 251,
                                                          np.int32)),
    "all_padding": (256, 4, 256, 256, np.full(256, -1, np.int32)),
    "out_of_range_blocks": (512, 4, 130, 200, _runs((4, 128), (INT32_MAX, 128), (INT32_MIN, 128), (1, 128))),
    "ids_change_at_64": (384, 3, 192, 384, _runs((0, 64), (1, 64), (2, 96), (0, 32), (1, 128))),
    "ids_change_inside_blocks": (300, 5, 160, 256, np.asarray([(i * 7 // 13) % 6 - 1 for i in range(300)], np.int32)),
    "random_ids_every_row": (256, 6, 144, 128, np.random.default_rng(1).integers(-2, 8, 256).astype(np.int32)),
    "garbage_32bit": (384, 8, 128, 256, _garbage_ids(384, 8, 2)),
    "one_row": (1, 2, 16, 16, np.asarray([1], np.int32)),
    "three_rows_one_expert": (3, 4, 130, 200, np.asarray([3, 3, 3], np.int32)),
    "m_tail_not_multiple_of_128": (200, 2, 520, 1000, _runs((1, 128), (0, 72))),
    "skewed_one_expert_g16": (512, 16, 256, 512, _runs((15, 512))),
    # the benchmark's layout: groups of any size, each padded with -1 rows to a multiple of 128 (segments of odd block
    # counts for 256-row tiles), an empty group, more tiles than SMs
    "padded_groups_many_tiles": (2560, 5, 2048, 256, _runs((0, 700), (-1, 68), (1, 333), (-1, 51), (3, 901), (-1, 123),
                                                           (4, 260), (-1, 124))),
    # K = 4096: the heuristics' own 256-row tiles walk the segments (heuristics.cc, step 11), of 3, 5, 2 and 2 blocks,
    # the last one's id out of range
    "long_k_segments": (1536, 3, 256, 4096, _runs((2, 300), (-1, 84), (0, 640), (1, 200), (-1, 56), (7, 256))),
    # 300 blocks in runs of 1-3 with ids in and out of range (113 segments, invalid ids counting as one key): in
    # forced 256 x 64 segment tiles a CTA's next tile is ~20 segments (~54 blocks) on, so the walk reads its keys in
    # more than one window of 32 blocks
    "many_short_segments": (300 * 128 - 50, 9, 256, 256, _short_runs(300 * 128 - 50, 9, seed=3)),
    # rows crossing 32-byte sectors (K % 32 != 0) in 128-row tiles over two waves: clusters of 2 by default
    # (heuristics.cc, step 5)
    "rows_crossing_sectors": (2048, 8, 2048, 2000, _runs((0, 384), (1, 128), (-1, 128), (2, 256), (3, 256), (4, 128),
                                                         (5, 384), (6, 256), (7, 128))),
}


@pytest.mark.parametrize("name", list(CONTIGUOUS))
def test_contiguous(name):
    m, g, n, k, ids = CONTIGUOUS[name]
    a, b = _lhs(m, k, name), _rhs(g, n, k, name)
    ids = jnp.asarray(ids)
    fn = jax.jit(dg.m_grouped_fp8_gemm_nt_contiguous)
    if name == "aligned_runs_and_padding":
        assert _uses_kernel(dg.m_grouped_fp8_gemm_nt_contiguous, a, b, ids, grouping="contiguous")
    if name == "long_k_segments":
        c = _default_config("contiguous", m, n, k, g)
        assert (c["block_m"], c["segments"]) == (256, True), c
    if name == "rows_crossing_sectors":
        c = _default_config("contiguous", m, n, k, g)
        assert (c["block_m"], c["cluster"]) == (128, 2), c
    a64, b64 = _deq(a, b)
    expected = oracle.contiguous(a64, b64, np.asarray(ids))
    bound = oracle.contiguous(a64, b64, np.asarray(ids), fn=oracle.gemm_bound)
    out = fn(a, b, ids)
    assert_matches(out, expected, bound, BF16)
    np.testing.assert_array_equal(np.asarray(fn(a, b, ids).astype(F32)), np.asarray(out.astype(F32)))


@pytest.mark.parametrize("per_row", [False, True])
def test_contiguous_f32_out_and_per_row_scales(per_row):
    m, g, n, k = 512, 4, 384, 640
    ids = jnp.asarray(_runs((2, 128), (0, 100), (-1, 28), (3, 256)))
    a, b = _lhs(m, k, "f32"), _rhs(g, n, k, "f32", per_row=per_row)
    a64, b64 = _deq(a, b)
    out = jax.jit(lambda a, b, i: dg.m_grouped_fp8_gemm_nt_contiguous(a, b, i, out_dtype=F32))(a, b, ids)
    assert_matches(out, oracle.contiguous(a64, b64, ids), oracle.contiguous(a64, b64, ids, fn=oracle.gemm_bound), F32)


def test_contiguous_nan_in_padding_rows_stays_out():
    """A padding row full of NaN bytes and an expert whose weights hold NaN must not leak into other rows."""
    m, g, n, k = 256, 3, 128, 256
    ids = np.asarray([0] * 64 + [-1] * 32 + [1] * 32 + [2] * 128, np.int32)
    a, b = _lhs(m, k, "nan"), _rhs(g, n, k, "nan")
    a_data = np.asarray(a[0]).copy()
    a_data[64:96] = np.float32("nan")  # padding rows: NaN bytes in FP8
    b_data = np.asarray(b[0]).copy()
    b_data[2, 5, 7] = np.float32("nan")  # expert 2 has a NaN weight: only its rows see it (column 5)
    a, b = (jnp.asarray(a_data), a[1]), (jnp.asarray(b_data), b[1])
    out = np.asarray(jax.jit(dg.m_grouped_fp8_gemm_nt_contiguous)(a, b, jnp.asarray(ids)).astype(F32))
    assert np.all(out[64:96] == 0)
    assert np.all(np.isnan(out[128:, 5])) and np.all(np.isfinite(np.delete(out, 5, axis=1)))
    assert np.all(np.isfinite(out[:128]))


def test_contiguous_nan_padding_beside_one_expert():
    """Tiles of one expert and padding rows whose data and scales are NaN: the pass takes the padding rows along
    unselected (the plain promotion), and they must still be stored as zeros, the expert's rows exact."""
    m, g, n, k = 512, 2, 256, 512
    ids = _runs((0, 200), (-1, 56), (1, 100), (-1, 28), (0, 100), (INT32_MAX, 28))
    a, b = _lhs(m, k, "nan-pad"), _rhs(g, n, k, "nan-pad")
    padding = np.asarray(ids) < 0
    padding |= np.asarray(ids) >= g
    a_data, a_scale = np.asarray(a[0]).copy(), np.asarray(a[1]).copy()
    a_data[padding] = np.float32("nan")
    a_scale[padding] = np.float32("nan")
    a = (jnp.asarray(a_data), jnp.asarray(a_scale))
    out = jax.jit(dg.m_grouped_fp8_gemm_nt_contiguous)(a, b, jnp.asarray(ids))
    assert np.all(np.asarray(out.astype(F32))[padding] == 0)
    a64, b64 = _deq(a, b)
    a64[padding] = 0  # the oracle's padding rows give zeros whatever their data; NaN would reach them through 0 * NaN
    expected = oracle.contiguous(a64, b64, ids)
    bound = oracle.contiguous(a64, b64, ids, fn=oracle.gemm_bound)
    assert_matches(out, expected, bound, BF16)


# ---------------------------------------------------------------------------------------------------- ragged

def _small_sizes(seed, g, low, high, at):
    """g group sizes (or masks) drawn from [low, high), then the values `at` ({index: value}) put in."""
    sizes = [int(v) for v in np.random.default_rng(seed).integers(low, high, g)]
    for i, v in at.items():
        sizes[i] = v
    return sizes


RAGGED = {
    # name: (M, N, K, sizes)
    "skewed_and_empty": (600, 130, 200, [0, 500, 0, 37, 1, 0, 62, 0]),
    "one_token_per_group": (64, 256, 256, [1] * 64),
    "sizes_1_to_300": (1200, 160, 384, [1, 300, 17, 128, 129, 255, 64, 65, 2, 239]),
    "rows_past_the_last_group": (500, 144, 128, [100, 3, 50]),
    "negative_and_int32_max": (400, 130, 200, [50, -7, INT32_MIN, 60, INT32_MAX, 40]),
    "sum_overflows_int32": (300, 128, 128, [INT32_MAX, INT32_MAX, INT32_MAX, 5]),
    "sum_past_m": (256, 192, 256, [100, 100, 100, 100]),
    "all_empty": (130, 130, 200, [0, 0, -1]),
    "300_groups": (700, 128, 256, list(np.random.default_rng(3).integers(0, 4, 300))),
    "single_group_all_rows": (1000, 520, 1000, [1000]),
    # ~1000 tiles over 200 small groups and the tail: a CTA's next tile lies ~25 groups on, so the tile walk reads
    # the sizes 32 at a time across window edges (fp8_gemm_tiles.cuh, seek_group), through negative, INT32_MIN and
    # (last) INT32_MAX sizes
    "200_groups_walked_in_windows": (3000, 640, 256, _small_sizes(5, 200, -3, 25, {50: INT32_MIN, 190: INT32_MAX})),
    # rows crossing 32-byte sectors (K % 32 != 0) in 128-row tiles over two waves: clusters of 2 by default
    # (heuristics.cc, step 5)
    "rows_crossing_sectors": (2048, 1792, 2000, [200, 64, 128, 0, 150, 100, 128, 90, 110, 128, 140, 60, 128, 256,
                                                 100, 120]),
}


@pytest.mark.parametrize("name", list(RAGGED))
def test_ragged(name):
    m, n, k, sizes = RAGGED[name]
    g = len(sizes)
    a, b = _lhs(m, k, name), _rhs(g, n, k, name)
    sizes = jnp.asarray(np.asarray(sizes, np.int64).clip(INT32_MIN, INT32_MAX).astype(np.int32))
    fn = jax.jit(dg.fp8_grouped_gemm_nt)
    if name == "skewed_and_empty":
        assert _uses_kernel(dg.fp8_grouped_gemm_nt, a, b, sizes, grouping="ragged")
    if name == "rows_crossing_sectors":
        c = _default_config("ragged", m, n, k, g)
        assert (c["block_m"], c["cluster"]) == (128, 2), c
    a64, b64 = _deq(a, b)
    out = fn(a, b, sizes)
    assert_matches(out, oracle.ragged(a64, b64, np.asarray(sizes)),
                   oracle.ragged(a64, b64, np.asarray(sizes), fn=oracle.gemm_bound), BF16)


@pytest.mark.parametrize("per_row", [False, True])
def test_ragged_f32_out_and_per_row_scales(per_row):
    m, n, k, sizes = 700, 384, 640, jnp.asarray([200, 0, 333, 100], jnp.int32)
    a, b = _lhs(m, k, "rf32"), _rhs(4, n, k, "rf32", per_row=per_row)
    a64, b64 = _deq(a, b)
    out = jax.jit(lambda a, b, s: dg.fp8_grouped_gemm_nt(a, b, s, out_dtype=F32))(a, b, sizes)
    assert_matches(out, oracle.ragged(a64, b64, sizes), oracle.ragged(a64, b64, sizes, fn=oracle.gemm_bound), F32)


def test_ragged_deepseek_like_shape():
    """MoE-sized: 8 experts, 2048 tokens routed unevenly, N=1024, K=4096 (the float64 oracle bounds the size)."""
    m, n, k, g = 2048, 1024, 4096, 8
    sizes = jnp.asarray(np.random.default_rng(4).multinomial(m - 37, np.full(g, 1 / g)).astype(np.int32))
    a, b = _lhs(m, k, "ds"), _rhs(g, n, k, "ds")
    a64, b64 = _deq(a, b)
    out = jax.jit(dg.fp8_grouped_gemm_nt)(a, b, sizes)
    assert_matches(out, oracle.ragged(a64, b64, sizes), oracle.ragged(a64, b64, sizes, fn=oracle.gemm_bound), BF16)


def test_ragged_dot_forward_and_backward_on_gpu():
    m, k, n, g = 512, 1024, 768, 6
    lhs = randn(seed_of("rd-x"), (m, k), BF16, spread=False)
    rhs = randn(seed_of("rd-w"), (g, k, n), BF16, spread=False) / 32
    sizes = jnp.asarray([100, 0, 150, 62, 200, 0], jnp.int32)

    def loss(dot, x, w):
        return jnp.mean(jnp.square(dot(x, w, sizes).astype(F32)))

    grads = jax.jit(jax.grad(lambda x, w: loss(dg.ragged_dot, x, w), argnums=(0, 1)))(lhs, rhs)
    with jax.default_matmul_precision("highest"):
        ref = jax.grad(lambda x, w: loss(jax.lax.ragged_dot, x, w), argnums=(0, 1))(lhs.astype(F32), rhs.astype(F32))
    for got, want in zip(grads, ref):
        assert cosine(got, want) > 0.995


# ---------------------------------------------------------------------------------------------------- masked

MASKED = {
    # name: (G, M, N, K, masked_m, expected_m)
    "zero_full_over_negative": (6, 256, 130, 200, [0, 256, 300, -5, 100, 129], 128),
    "int32_extremes": (4, 192, 256, 256, [INT32_MAX, INT32_MIN, 1, 64], 64),
    "m_not_multiple_of_block": (4, 200, 144, 384, [200, 199, 73, 1], 150),
    "small_m_many_groups": (16, 40, 128, 128, list(range(0, 48, 3)), 20),
    "expected_m_1": (3, 512, 384, 640, [500, 12, 512], 1),
    "all_zero": (2, 128, 128, 128, [0, 0], 64),
    # 96 groups of 8 tiles: a CTA's next tile lies ~16 groups on (the walk reads the masks 32 at a time)
    "96_groups_walked_in_windows": (96, 64, 1024, 256, _small_sizes(6, 96, -10, 80, {40: INT32_MAX}), 32),
    # groups expected to fill two 256-row tiles over 32 K blocks: the model's 256 x 128 tiles with the tail split
    # (few tiles: every one split over a pair of CTAs)
    "tall_tiles": (2, 1024, 256, 4096, [1000, 517], 600),
    "tall_tiles_hostile": (3, 600, 256, 4096, [INT32_MAX, -7, 300], 512),
    # groups of 129-511 expected rows over the tail split's K at N >= 4096: 128 x 192 tiles with the tail split
    # (heuristics.cc, step 20)
    "mid_groups": (4, 384, 4096, 4096, [INT32_MAX, -3, 217, 129], 256),
    # rows crossing 32-byte sectors (K % 32 != 0) over two waves: clusters of 2 by default (heuristics.cc, step 5)
    "rows_crossing_sectors": (4, 256, 4096, 2000, [256, 100, 0, 255], 128),
}


@pytest.mark.parametrize("name", list(MASKED))
def test_masked(name):
    g, m, n, k, masked_m, expected_m = MASKED[name]
    x = randn(seed_of("mx", name), (g, m, k))
    a, b = q_lhs_batched(x), _rhs(g, n, k, name)
    masked_m = jnp.asarray(masked_m, jnp.int32)
    fn = jax.jit(lambda a, b, mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, expected_m))
    if name == "zero_full_over_negative":
        assert _uses_kernel(lambda a, b, mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, expected_m), a, b, masked_m,
                            grouping="masked")
    if name.startswith("tall_tiles"):
        c = _default_config("masked", m, n, k, g, expected_m=expected_m)
        assert (c["block_m"], c["block_n"], c["tail_split"]) == (256, 128, True), c
    if name == "mid_groups":
        c = _default_config("masked", m, n, k, g, expected_m=expected_m)
        assert (c["block_m"], c["block_n"], c["tail_split"]) == (128, 192, True), c
    if name == "rows_crossing_sectors":
        c = _default_config("masked", m, n, k, g, expected_m=expected_m)
        assert c["cluster"] == 2, c
    a64, b64 = _deq(a, b)
    valid = oracle.masked_valid(masked_m, g, m)
    out = fn(a, b, masked_m)
    assert_matches(out, oracle.masked(a64, b64), oracle.masked(a64, b64, fn=oracle.gemm_bound), BF16, rows=valid)


# (n, k): short K; and N >= 4096 over the tail split's K with groups of 129-511 expected rows, where heuristics step
# 20 takes 128 x 192 with block scales (per-row ones keep step 6's search: 192 was once picked for them, and threw)
@pytest.mark.parametrize("n,k", [(256, 512), (4096, 4096)])
@pytest.mark.parametrize("per_row", [False, True])
def test_masked_f32_out_and_per_row_scales(per_row, n, k):
    g, m = 3, 384
    x = randn(seed_of("mf32", n), (g, m, k))
    a, b = q_lhs_batched(x), _rhs(g, n, k, "mf32", per_row=per_row)
    masked_m = jnp.asarray([384, 77, 200], jnp.int32)
    a64, b64 = _deq(a, b)
    out = jax.jit(lambda a, b, mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, 200, out_dtype=F32))(a, b, masked_m)
    assert_matches(out, oracle.masked(a64, b64), oracle.masked(a64, b64, fn=oracle.gemm_bound), F32,
                   rows=oracle.masked_valid(masked_m, g, m))


# ---------------------------------------------------------------------------------------------------- k-grouped

K_GROUPED = {
    # name: (M, N, sizes); K = the sum of the valid segments' 128-rounded extent, or given by "k"
    "four_groups": (256, 384, [1024, 512, 1536, 1024]),
    "skewed_and_empty": (200, 130, [0, 2048, 128, 0, 256]),
    "one_group": (64, 16, [896]),
    "m_and_n_tails": (130, 200, [384, 256, 128]),
    "many_groups": (96, 144, [128] * 16 + [0] * 4 + [256] * 4),
    "odd_n": (136, 259, [384, 0, 256]),  # rows of odd N: f32 stores shifted to each row's alignment
    # 4 x 5 x 12 = 240 tiles of 256 x 128 over 32 K blocks each: two rounds on a balanced grid (heuristics.cc,
    # step 14) of 128 CTAs in clusters of 2
    "balanced_grid": (1280, 1536, [4096] * 4),
}


def _k_grouped_operands(m, n, k, seed):
    a = q_lhs(randn(seed_of("kg-a", m, k, seed), (m, k)))
    b = q_lhs(randn(seed_of("kg-b", n, k, seed), (n, k)))
    return a, b


@pytest.mark.parametrize("with_c", [False, True])
@pytest.mark.parametrize("name", list(K_GROUPED))
def test_k_grouped(name, with_c):
    m, n, sizes = K_GROUPED[name]
    sizes = np.asarray(sizes, np.int32)
    k, g = int(sizes.sum()), len(sizes)
    a, b = _k_grouped_operands(m, n, k, name)
    c = randn(seed_of("kg-c", name), (g, m, n)) if with_c else None
    fn = lambda a, b, s, c: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c)  # noqa: E731
    assert _uses_kernel(fn, a, b, sizes, c, grouping="k_grouped")
    if name == "balanced_grid":
        cfg = _default_config("k_grouped", m, n, k, g, b_scale_per_row=True, out_f32=True, c_kind=2 if with_c else 0)
        assert (cfg["block_m"], cfg["cluster"], cfg["tiles"]) == (256, 2, 240), cfg
        sms = runtime.get_num_sms()
        assert cfg["grid"] == (sms // 16 * 16 if -(-240 // (sms // 16 * 16)) == cfg["waves"] else sms // 2 * 2), cfg
    out = jax.jit(fn)(a, b, jnp.asarray(sizes), c)
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_lhs(*b)
    ref, bound = oracle.k_grouped(a64, b64, sizes, c), oracle.k_grouped(a64, b64, sizes, c, oracle.gemm_bound)
    assert_matches(out, ref, bound, F32)


@pytest.mark.parametrize("name", ["skewed_and_empty", "odd_n", "balanced_grid"])
def test_k_grouped_overwrite_c(name):
    """D written over C's buffer (overwrite_c=True): the oracle, and the bits of D in a buffer of its own."""
    m, n, sizes = K_GROUPED[name]
    sizes = jnp.asarray(sizes, jnp.int32)
    k, g = int(sizes.sum()), sizes.shape[0]
    a, b = _k_grouped_operands(m, n, k, name)
    c = randn(seed_of("kg-c-over", name), (g, m, n))
    gemm = lambda a, b, s, c, over: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c, overwrite_c=over)  # noqa
    out = jax.jit(gemm, static_argnums=4)(a, b, sizes, c, True)
    a64, b64, s = oracle.dequant_lhs(*a), oracle.dequant_lhs(*b), np.asarray(sizes)
    assert_matches(out, oracle.k_grouped(a64, b64, s, c), oracle.k_grouped(a64, b64, s, c, oracle.gemm_bound), F32)
    assert_overwrite_c_changes_no_bit(gemm, (a, b, sizes), c)


@pytest.mark.parametrize("name", list(K_GROUPED))
def test_k_grouped_bf16_out(name):
    """bf16 out (no C): the kernel rounds its float32 sums once, so each element is the float32 kernel's result
    rounded to bf16, bit for bit, and within one bf16 rounding of the oracle."""
    m, n, sizes = K_GROUPED[name]
    sizes = np.asarray(sizes, np.int32)
    k = int(sizes.sum())
    a, b = _k_grouped_operands(m, n, k, name)
    fn = jax.jit(dg.k_grouped_fp8_gemm_nt_contiguous, static_argnames="out_dtype")
    assert _uses_kernel(lambda a, b, s: fn(a, b, s, out_dtype=BF16), a, b, sizes, grouping="k_grouped")
    out_f32 = fn(a, b, jnp.asarray(sizes))
    out = fn(a, b, jnp.asarray(sizes), out_dtype=BF16)  # (last: test_gpu_configs.py checks its configuration)
    np.testing.assert_array_equal(np.asarray(out).view(np.uint16), np.asarray(out_f32.astype(BF16)).view(np.uint16))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_lhs(*b)
    assert_matches(out, oracle.k_grouped(a64, b64, sizes, None), oracle.k_grouped(a64, b64, sizes, None,
                                                                                   oracle.gemm_bound), BF16)


# (M, N): one wave of small tiles; two rounds of 256 x 128 tiles, which the heuristics run in clusters of 2 (both CTAs
# of a pair read and clamp the same sizes).
K_GROUPED_HOSTILE_SHAPES = [(192, 160), (2048, 1024)]


@pytest.mark.parametrize("mn", K_GROUPED_HOSTILE_SHAPES, ids=["one_wave", "clusters"])
@pytest.mark.parametrize("sizes,checked", [
    ([512, -7, 256, 256], [0, 2, 3]),                  # negative: counts as 0
    ([512, 2**31 - 1, 128, 128], [0]),                 # past K: cut at K, later groups empty
    ([2**31 - 1, 2**31 - 1, 2**31 - 1, 5], []),        # sums overflowing int32
    ([100, 412, 256, 256], [3]),                       # unaligned segments: unspecified values in groups 0-2
    ([-2**31, 0, 0, 1024], [0, 1, 2, 3]),
])
def test_k_grouped_hostile_sizes(sizes, checked, mn):
    """Whatever group_sizes hold, the kernel stays in bounds (run under compute-sanitizer to see it) and the groups
    the contract defines are right; empty groups are exactly C."""
    (m, n), k = mn, 1024
    if mn == K_GROUPED_HOSTILE_SHAPES[1]:
        c = _default_config("k_grouped", m, n, k, len(sizes), b_scale_per_row=True, out_f32=True, c_kind=2)
        assert (c["block_m"], c["cluster"]) == (256, 2), c
    sizes = np.asarray(sizes, np.int64).astype(np.int32)
    a, b = _k_grouped_operands(m, n, k, "hostile")
    c = randn(seed_of("kg-hostile-c"), (len(sizes), m, n))
    out = jax.jit(lambda a, b, s, c: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c))(a, b, jnp.asarray(sizes), c)
    assert np.isfinite(np.asarray(out)).all()
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_lhs(*b)
    ref, bound = oracle.k_grouped(a64, b64, sizes, c), oracle.k_grouped(a64, b64, sizes, c, oracle.gemm_bound)
    for gi in checked:
        assert_matches(out[gi], ref[gi], bound[gi], F32)
    # bf16 out (no C): the same groups right, empty ones zeros, every element written
    out = jax.jit(lambda a, b, s: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, out_dtype=BF16))(a, b,
                                                                                              jnp.asarray(sizes))
    assert np.isfinite(np.asarray(out, np.float32)).all()
    ref, bound = oracle.k_grouped(a64, b64, sizes, None), oracle.k_grouped(a64, b64, sizes, None, oracle.gemm_bound)
    for gi in checked:
        assert_matches(out[gi], ref[gi], bound[gi], BF16)


# ---------------------------------------------------------------------------------------------------- scan

def test_grouped_inside_scan():
    """Every family, launched several times inside one jitted lax.scan (XLA may capture them in a command buffer),
    with the group data changing from step to step: the kernels read it on the device."""
    steps, m, n, k, g = 4, 256, 256, 384, 4
    rng = np.random.default_rng(5)
    xs = randn(seed_of("scan-x"), (steps, m, k))
    a_steps = jax.vmap(dg.per_token_cast_to_fp8)(xs)
    b = _rhs(g, n, k, "scan")
    ids = jnp.asarray(np.stack([np.sort(rng.integers(-1, g + 1, m)).astype(np.int32) for _ in range(steps)]))
    sizes = jnp.asarray(rng.integers(-20, 120, (steps, g)).astype(np.int32))
    masked_m = jnp.asarray(rng.integers(-10, m // g + 20, (steps, g)).astype(np.int32))

    @jax.jit
    def run(a_steps, b, ids, sizes, masked_m):
        def body(carry, xs):
            a_data, a_scale, i, s, mm = xs
            a = (a_data, a_scale)
            c = dg.m_grouped_fp8_gemm_nt_contiguous(a, b, i, out_dtype=F32)
            r = dg.fp8_grouped_gemm_nt(a, b, s, out_dtype=F32)
            a3 = (a_data.reshape(g, m // g, k), a_scale.reshape(g, m // g, -1))
            d = dg.m_grouped_fp8_gemm_nt_masked(a3, b, mm, m // g, out_dtype=F32)
            return carry + 1, (c, r, d)
        return jax.lax.scan(body, 0, (a_steps[0], a_steps[1], ids, sizes, masked_m))

    assert 'grouping = "masked"' in run.lower(a_steps, b, ids, sizes, masked_m).as_text()
    _, (cs, rs, ds) = run(a_steps, b, ids, sizes, masked_m)
    b64 = oracle.dequant_rhs(*b)
    for i in range(steps):
        a64 = oracle.dequant_lhs(a_steps[0][i], a_steps[1][i])
        assert_matches(cs[i], oracle.contiguous(a64, b64, ids[i]),
                       oracle.contiguous(a64, b64, ids[i], fn=oracle.gemm_bound), F32)
        assert_matches(rs[i], oracle.ragged(a64, b64, sizes[i]), oracle.ragged(a64, b64, sizes[i], fn=oracle.gemm_bound),
                       F32)
        a3 = a64.reshape(g, m // g, k)
        assert_matches(ds[i], oracle.masked(a3, b64), oracle.masked(a3, b64, fn=oracle.gemm_bound), F32,
                       rows=oracle.masked_valid(masked_m[i], g, m // g))


def test_k_grouped_inside_scan():
    """The k-grouped kernel launched at every step of a jitted lax.scan, its segment sizes changing per step."""
    steps, m, n, k = 3, 128, 256, 1024
    a, b = _k_grouped_operands(m, n, k, "scan")
    sizes = jnp.asarray([[256, 256, 512], [0, 1024, 0], [128, -5, 640]], jnp.int32)

    @jax.jit
    def run(a, b, sizes):
        def body(c, s):
            d = dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c)
            return d, d
        return jax.lax.scan(body, jnp.zeros((3, m, n), F32), sizes)[1]

    assert 'grouping = "k_grouped"' in run.lower(a, b, sizes).as_text()
    outs = run(a, b, sizes)
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_lhs(*b)
    c = np.zeros((3, m, n))
    for i in range(steps):
        ref = oracle.k_grouped(a64, b64, np.asarray(sizes[i]), c)
        bound = oracle.k_grouped(a64, b64, np.asarray(sizes[i]), c, oracle.gemm_bound)
        assert_matches(outs[i], ref, bound, F32)
        c = np.asarray(outs[i], np.float64)  # the next step adds onto what the kernel wrote
