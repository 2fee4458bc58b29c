"""The native runtime (jax_deepgemm._C): module API, config heuristic, JIT compilation with NVRTC / NVCC, compile
errors, and the FFI handler's attribute contract. Runs without a GPU. The caches' robustness (damaged entries,
unusable directories, concurrent processes and threads) is tested in test_jit_cache.py.

Kernels are compiled for sm_90a from a stub kernel header (always) and from the real cuda/ headers (when
cuda/jax_deepgemm/fp8_gemm.cuh exists). Every test uses its own DG_JIT_CACHE_DIR under tmp_path.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import textwrap

import pytest
from jit_support import (  # noqa: F401  (isolated and stub_dir are fixtures)
    _C,
    CUDA_DIR,
    MACROS,
    PROBLEM,
    REPO,
    STUB_KERNEL,
    clean_env,
    have_nvcc,
    have_nvrtc,
    isolated,
    make_include_dir,
    needs_compiler,
    needs_nvcc,
    needs_nvrtc,
    needs_real_kernel,
    nvrtc_candidates,
    stub_dir,
)


# ---------------------------------------------------------------------------------------------------------------
# Module API and heuristic (no compiler needed)


def test_registrations_and_state_types():
    regs = _C.registrations()
    assert set(regs) == {"jdg_fp8_gemm", "jdg_fp8_quantize_t"}
    for bundle in regs.values():
        assert set(bundle) == {"instantiate", "initialize", "execute"}
        assert all(type(c).__name__ == "PyCapsule" for c in bundle.values())
    types = _C.state_types()
    assert set(types) == {"jax_deepgemm.Fp8GemmState", "jax_deepgemm.Fp8QuantizeState"}
    for entry in types.values():
        assert set(entry) == {"type_id", "type_info"}
        assert all(type(c).__name__ == "PyCapsule" for c in entry.values())


def test_runtime_info(tmp_path):
    info = _C.runtime_info()
    assert set(info) >= {"driver", "nvrtc", "nvcc", "cache_dir"}
    assert info["cache_dir"] == str(tmp_path / "jit_cache")
    for tool in ("nvrtc", "nvcc"):
        s = info[tool]
        assert (s["version"] is not None) == s["available"]
        assert s["available"] or s["error"]
    assert info["driver"]["loaded"] or info["driver"]["error"]


SMEM_LIMIT = 232448


@pytest.mark.parametrize("m,n,k", [(1, 2112, 7168), (64, 7168, 2048), (65, 4096, 512), (128, 2112, 7168),
                                   (4096, 7168, 2048), (4096, 2112, 7168), (300, 24576, 1536), (7, 16, 128),
                                   (1024, 100, 16), (6144, 2112, 7168), (2048, 2112, 4096),
                                   (4096, 7168, 16384), (8192, 4096, 32768), (4096, 7168, 6000),
                                   (512, 7168, 4000), (4096, 4096, 1408)])
@pytest.mark.parametrize("num_sms", [132, 78, 1])
@pytest.mark.parametrize("hbm_gbs", [0, 4917])  # unknown (an H100's rate), an H200
def test_heuristic(m, n, k, num_sms, hbm_gbs, monkeypatch):
    monkeypatch.setenv("DG_TUNE_SPLIT_K", "1")  # steps 1-5; step 9 (split K) is checked against this choice below
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "0")  # (step 21: test_dense_short_last_round_takes_full_width_tiles)
    c = _C.select_fp8_gemm_config(m, n, k, num_sms)
    assert c["split_k"] == 1
    assert c["block_m"] in ((64,) if m <= 64 else (128,) if m <= 128 else (128, 256))
    assert c["block_n"] % 16 == 0 and 16 <= c["block_n"] <= (128 if c["block_m"] == 256 else 256)
    kb = -(-k // 128)
    assert 1 <= c["stages"] <= min(16, kb + 1)
    assert c["smem_bytes"] <= SMEM_LIMIT
    assert c["num_threads"] == 128 + 128 * (1 if c["block_m"] == 64 else 2)
    tiles = -(-m // c["block_m"]) * -(-n // c["block_n"])
    assert c["tiles"] == tiles and c["waves"] == -(-tiles // num_sms)
    # dense clusters (heuristics.cc, step 5): M >= 2048, two waves, and tiles whose copies set the pace over >= 32
    # K blocks or any tiles over >= 128; or rows that are not 128-byte multiples over >= 12 K blocks, at any M and
    # at one wave too
    # (step 15: not 128 x 192 tiles over >= 32 K blocks, which take the fewest CTAs that keep their rounds)
    copy_bound = 80 * (c["block_m"] + c["block_n"]) > c["block_m"] * c["block_n"]
    unaligned = k % 128 != 0 and kb >= 12
    wide = (c["block_m"], c["block_n"]) == (128, 192) and kb >= 32 and not unaligned
    pays = num_sms >= 2 and (unaligned or (not wide and m >= 2048 and ((copy_bound and kb >= 32) or kb >= 128) and
                                           c["waves"] >= 2))
    cluster = 2 if pays else 1
    grid = min(num_sms // cluster * cluster, tiles + tiles % cluster)
    if c["block_m"] == 256 and kb >= 32 and grid >= 16:  # step 14: whole band rows (16 CTAs) if the rounds stay
        whole, band_rows = tiles + tiles % cluster, grid // 16 * 16
        grid = band_rows if -(-whole // band_rows) == -(-whole // grid) else grid
    if wide and grid > 0:
        rounds = -(-tiles // grid)
        grid = -(-tiles // rounds)
    assert c["cluster"] == cluster and c["grid"] == grid
    # No other candidate has a lower modelled cost, waves x (BLOCK_N x BLOCK_M / 128 + 64) (ffi/heuristics.cc):
    # the widths dividing 128, and 160, 192 (at most 128 for 256-row tiles).
    def cost(bm, bn):
        return -(-(-(-m // bm) * -(-n // bn)) // num_sms) * (bn * bm // 128 + 64)

    for bm in {c["block_m"], 128 if m > 64 else 64, 256 if m > 128 else 64}:
        for bn in (16, 32, 64, 128, 160, 192):
            if bm < 256 or bn <= 128:
                assert cost(bm, bn) >= cost(c["block_m"], c["block_n"]), (bm, bn)
    monkeypatch.delenv("DG_TUNE_SPLIT_K")  # unset: the model's choice, as with DG_TUNE_SPLIT_K=0
    chosen = _C.select_fp8_gemm_config(m, n, k, num_sms, hbm_gbs=hbm_gbs)
    _check_split_k(m, n, k, num_sms, c, chosen, hbm_gbs, monkeypatch)
    monkeypatch.setenv("DG_TUNE_SPLIT_K", "0")
    assert _C.select_fp8_gemm_config(m, n, k, num_sms, hbm_gbs=hbm_gbs) == chosen


def _split_k_cycles(bm, bn, kb, split_k, ctas, hbm_gbs):
    """heuristics.cc, step 9: a CTA's cycles on one tile while `ctas` CTAs run (per K block the dearest of its copies
    at 2.8 cycles per 128-byte row, 400, its wgmma at 4096 FLOP per cycle and the chip's HBM stream of B at 1350
    bytes per cycle for an H100's 3352 GB/s, scaled by the GPU's, hbm_gbs; with split K the exchange of the partial
    tiles at 32 bytes per cycle plus 500)."""
    exchange = 0 if split_k == 1 else 500 + (split_k - 1) * bm * bn * 4 / 32
    hbm_rate = 1350 * (hbm_gbs / 3352 if hbm_gbs else 1)
    per_k_block = max(400, 2.8 * (bm + bn), 2 * bm * bn * 128 / 4096, ctas * bn * 128 / hbm_rate)
    return -(-kb // split_k) * per_k_block + exchange


def _split_stages(m, n, k, num_sms, bm, bn, monkeypatch):
    """The stages of BLOCK_M x BLOCK_N tiles split over 2 (forced)."""
    with monkeypatch.context() as mp:
        for knob, value in (("SPLIT_K", 2), ("BLOCK_M", bm), ("BLOCK_N", bn)):
            mp.setenv(f"DG_TUNE_{knob}", str(value))
        return _C.select_fp8_gemm_config(m, n, k, num_sms)["stages"]


def _check_split_k(m, n, k, num_sms, unsplit, c, hbm_gbs, monkeypatch):
    """Step 9: a one-wave choice with at most 128-row tiles over >= 16 K blocks takes split K over 2 CTAs with the
    width the model expects fastest, where that is below 0.8 of the unsplit time and the split tiles keep >= 4
    stages; everything else stays as it was."""
    kb, bm = -(-k // 128), unsplit["block_m"]
    best, best_cycles = None, 0.8 * _split_k_cycles(bm, unsplit["block_n"], kb, 1, unsplit["tiles"], hbm_gbs)
    if unsplit["waves"] == 1 and bm <= 128 and kb >= 16 and num_sms >= 2:
        for bn in (16, 32, 64, 128, 160, 192):
            tiles = -(-m // bm) * -(-n // bn)
            cycles = _split_k_cycles(bm, bn, kb, 2, 2 * tiles, hbm_gbs)
            if 2 * tiles <= num_sms // 2 * 2 and cycles < best_cycles and \
                    _split_stages(m, n, k, num_sms, bm, bn, monkeypatch) >= 4:
                best, best_cycles = bn, cycles
    if best is None:
        assert c == unsplit
        return
    tiles = -(-m // bm) * -(-n // best)
    assert (c["split_k"], c["block_m"], c["block_n"], c["cluster"]) == (2, bm, best, 1), c
    assert c["tiles"] == tiles and c["waves"] == 1 and c["grid"] == 2 * tiles and c["smem_bytes"] <= SMEM_LIMIT


def test_small_tiles_keep_16_stages_in_flight(monkeypatch):
    c = _C.select_fp8_gemm_config(64, 2112, 7168, 132)  # split K: 64 x 32 tiles over a cluster of 2
    assert (c["block_m"], c["block_n"], c["split_k"], c["stages"]) == (64, 32, 2, 16) and c["smem_bytes"] <= SMEM_LIMIT
    monkeypatch.setenv("DG_TUNE_SPLIT_K", "1")
    c = _C.select_fp8_gemm_config(64, 2112, 7168, 132)
    assert (c["block_m"], c["block_n"], c["stages"]) == (64, 16, 16) and c["smem_bytes"] <= SMEM_LIMIT
    assert _C.select_fp8_gemm_config(64, 2112, 512, 132)["stages"] == 5  # K = 512: 4 K blocks + 1


# Step 21 (heuristics.cc): dense picks narrower than 128 x 192 / 256 x 128 and without the accumulator pipeline move
# to a full-width tile whose short last round (at most half of the SMs) the tail split halves, where the model prices
# that strictly lower (in half waves); no clusters then. (M, N, K): the pick before, the pick now.
TAIL_ROUNDS_MOVED = [
    ((2048, 2112, 7168), (256, 64, 2), (128, 192)),   # 264 tiles in 2 rounds -> 176 = 132 + 44
    ((2560, 4096, 7168), (128, 160, 2), (256, 128)),  # 520 tiles in 4 rounds -> 320 = 2 x 132 + 56
    ((3072, 1536, 7168), (128, 160, 2), (128, 192)),  # 240 -> 192 = 132 + 60
    ((1536, 3072, 7168), (128, 160, 1), (128, 192)),
]
TAIL_ROUNDS_KEPT = [(640, 6144, 7168),  # 128 x 128 (the accumulator pipeline): kept
                    (1536, 4096, 7168), (4096, 7168, 16384), (4096, 2112, 7168),  # full-width picks
                    (4096, 7168, 2048), (2048, 2112, 2048)]  # under 32 K blocks


def _fields(c, *names):
    return tuple(c[name] for name in names)


@pytest.mark.parametrize("shape,before,after", TAIL_ROUNDS_MOVED)
def test_dense_short_last_round_takes_full_width_tiles(shape, before, after, monkeypatch):
    c = _C.select_fp8_gemm_config(*shape, 132)
    assert _fields(c, "block_m", "block_n", "tail_split", "cluster", "split_k") == (*after, True, 1, 1), c
    assert c["grid"] == 132 and 0 < 2 * (c["tiles"] - (c["waves"] - 1) * 132) <= 132, c  # a last round to halve
    half_waves = 2 * c["waves"] - 1
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "0")  # the search before step 21
    old = _C.select_fp8_gemm_config(*shape, 132)
    assert _fields(old, "block_m", "block_n", "cluster", "tail_split") == (*before, False), old
    unit = c["block_m"] * c["block_n"] // 128 + 64 - (1 if c["block_n"] == 192 else 0)
    old_unit = old["block_m"] * old["block_n"] // 128 + 64
    assert half_waves * unit < 2 * old["waves"] * old_unit
    # forced tiles, per-row B scales, rows that are not 128-byte multiples: no step 21
    monkeypatch.delenv("DG_TUNE_TAIL_SPLIT")
    assert not _C.select_fp8_gemm_config(*shape[:2], shape[2] - 160, 132)["tail_split"]  # K % 128 == 96
    assert not _C.select_fp8_gemm_config(*shape, 132, b_scale_per_row=True)["tail_split"]
    monkeypatch.setenv("DG_TUNE_CLUSTER", "2")  # forced clusters exclude the split
    assert not _C.select_fp8_gemm_config(*shape, 132)["tail_split"]
    monkeypatch.delenv("DG_TUNE_CLUSTER")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", str(before[1]))
    assert _fields(_C.select_fp8_gemm_config(*shape, 132), "block_n", "tail_split") == (before[1], False)


# Steps 21 and 22 over a grid of shapes and SM counts: wherever a dense pick takes the tail split, over >= 32 K
# blocks at M > 128 and in no cluster, either (step 21) it is a full-width tile with at least two rounds, the last for
# at most half of the SMs, and the search before the step had picked a narrower tile without the accumulator
# pipeline, or (step 22) its tiles fill at most half of the SMs in one round, and the pick before ran one round of
# tiles under 128 columns.
@pytest.mark.parametrize("num_sms", [132, 114, 78])
def test_dense_tail_split_picks_keep_step_21s_bounds(num_sms, monkeypatch):
    moved = {21: 0, 22: 0}
    for m in (256, 768, 1536, 2048, 2560, 3072, 5120):
        for n, k in ((2112, 7168), (1536, 7168), (4096, 7168), (5120, 5120), (2560, 8192), (4096, 2048)):
            monkeypatch.delenv("DG_TUNE_TAIL_SPLIT", raising=False)
            c = _C.select_fp8_gemm_config(m, n, k, num_sms)
            if not c["tail_split"]:
                continue
            assert c["cluster"] == 1 and k >= 4096 and m > 128, (m, n, k, c)
            monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "0")
            old = _C.select_fp8_gemm_config(m, n, k, num_sms)
            if c["waves"] == 1:
                moved[22] += 1
                assert 2 * c["tiles"] <= num_sms and old["waves"] == 1, (m, n, k, c, old)
                assert old["block_n"] < 128, (m, n, k, old)
                continue
            moved[21] += 1
            assert (c["block_m"], c["block_n"]) in ((128, 192), (256, 128)), c
            last_round = c["tiles"] - (c["waves"] - 1) * num_sms
            assert 0 < 2 * last_round <= num_sms, (m, n, k, c)
            assert (old["block_m"], old["block_n"]) not in ((128, 192), (256, 128)) and not old["acc_pipeline"], old
    assert moved[21] > 0 and moved[22] > 0  # the grid holds shapes both steps move


# Step 22: a dense pick of one round of tiles narrower than 128 columns takes a tile whose tiles fill at most half of
# the SMs, each split over K by a pair of CTAs (the tail split of a single round), where the model prices that half
# wave lower.
SPLIT_ROUND_MOVED = [
    ((512, 1536, 7168), (128, 64, 96), (128, 128, 48)),  # 96 on 96 -> 48 on 96
    ((384, 4096, 7168), (256, 64, 128), (128, 192, 66)),  # 128 on 128 -> 66 on 132
    ((640, 2048, 7168), (256, 64, 96), (128, 160, 65)),
    ((384, 1024, 7168), (256, 16, 128), (128, 64, 48)),
]
# 128-column picks keep their one round however the model prices the split (split, four of eight such rows ran 10-13%
# slower, two level, two faster, among them 768 x 1536 x 7168: NOTES 155).
SPLIT_ROUND_KEPT = [(512, 4096, 7168), (2048, 1024, 7168), (768, 2112, 4096), (768, 1536, 7168)]


@pytest.mark.parametrize("shape,before,after", SPLIT_ROUND_MOVED)
def test_dense_single_round_splits_over_k(shape, before, after, monkeypatch):
    c = _C.select_fp8_gemm_config(*shape, 132)
    assert _fields(c, "block_m", "block_n", "tiles", "tail_split", "cluster", "split_k", "waves") == (
        *after, True, 1, 1, 1), c
    assert c["grid"] == 2 * c["tiles"], c  # every tile halved over a pair of CTAs
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "0")  # the picks before steps 21 and 22
    old = _C.select_fp8_gemm_config(*shape, 132)
    assert _fields(old, "block_m", "block_n", "tiles", "tail_split", "waves") == (*before, False, 1), old
    unit = c["block_m"] * c["block_n"] // 128 + 64 - (1 if c["block_n"] == 192 else 0)
    assert unit < 2 * (old["block_m"] * old["block_n"] // 128 + 64)  # one half wave against two
    # forced tiles, per-row B scales, rows that are not 128-byte multiples, K under 32 blocks: no step 22
    monkeypatch.delenv("DG_TUNE_TAIL_SPLIT")
    assert not _C.select_fp8_gemm_config(*shape[:2], shape[2] - 160, 132)["tail_split"]  # K % 128 == 96
    assert not _C.select_fp8_gemm_config(*shape, 132, b_scale_per_row=True)["tail_split"]
    assert not _C.select_fp8_gemm_config(*shape[:2], 3968, 132)["tail_split"]  # 31 K blocks
    monkeypatch.setenv("DG_TUNE_BLOCK_N", str(before[1]))
    assert _fields(_C.select_fp8_gemm_config(*shape, 132), "block_n", "tail_split") == (before[1], False)


@pytest.mark.parametrize("shape", SPLIT_ROUND_KEPT)
def test_dense_single_round_of_128_columns_not_split(shape):
    c = _C.select_fp8_gemm_config(*shape, 132)
    assert _fields(c, "block_m", "block_n", "waves", "tail_split") == (128, 128, 1, False), c


@pytest.mark.parametrize("shape", TAIL_ROUNDS_KEPT)
def test_dense_full_rounds_keep_their_pick(shape, monkeypatch):
    c = _C.select_fp8_gemm_config(*shape, 132)
    assert not c["tail_split"], c
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "0")
    assert _C.select_fp8_gemm_config(*shape, 132) == c


def test_tune_cluster(monkeypatch):
    c = _C.select_fp8_gemm_config(4096, 7168, 8192, 132)  # 256 x 128 tiles: clusters from 128 K blocks on
    assert (c["block_m"], c["block_n"], c["cluster"]) == (256, 128, 1)
    c = _C.select_fp8_gemm_config(4096, 7168, 16384, 132)  # 896 tiles: 7 rounds on 128 CTAs (step 14)
    assert (c["block_m"], c["block_n"], c["cluster"], c["grid"]) == (256, 128, 2, 128)
    assert _C.select_fp8_gemm_config(1024, 7168, 16384, 132)["cluster"] == 1  # M < 2048
    with monkeypatch.context() as mp:  # (step 21 moves it to 128 x 192 with the tail split)
        mp.setenv("DG_TUNE_TAIL_SPLIT", "0")
        c = _C.select_fp8_gemm_config(2048, 2112, 7168, 132)  # 256 x 64 tiles, 33 N blocks: clustered
    assert (c["block_m"], c["block_n"], c["cluster"], c["grid"]) == (256, 64, 2, 132)
    c = _C.select_fp8_gemm_config(4096, 2112, 7168, 132)  # 128 x 192 (ties 256 x 64 in the model, see cost_of):
    assert (c["block_m"], c["block_n"], c["cluster"], c["grid"]) == (128, 192, 1, 118)  # step 15, 3 rounds
    # The discount for 192-wide tiles is dense only: a grouped tie (128 x 128 against 128 x 192) keeps the old rule.
    assert (_grouped("contiguous", 4 * 512, 4096, 7168, 4)["block_n"]) == 128
    c = _C.select_fp8_gemm_config(6144, 2112, 7168, 132)  # 128 x 192 tiles, 11 N blocks: 528 = 4 x 132
    assert (c["block_m"], c["block_n"], c["cluster"], c["grid"]) == (128, 192, 1, 132)
    c = _C.select_fp8_gemm_config(4096, 2112, 7008, 132)  # rows that are not 128-byte multiples keep step 5
    assert (c["block_m"], c["block_n"], c["cluster"], c["grid"]) == (128, 192, 2, 132)
    assert _C.select_fp8_gemm_config(4096, 2112, 2048, 132)["cluster"] == 1  # 16 K blocks
    assert _C.select_fp8_gemm_config(1024, 2112, 7168, 132)["cluster"] == 1  # M < 2048
    # rows that are not 128-byte multiples: from 12 K blocks on, at any M and at one wave too
    c = _C.select_fp8_gemm_config(4096, 7168, 7008, 132)  # (and 7 rounds on 128 CTAs, step 14)
    assert (c["block_m"], c["block_n"], c["cluster"], c["multicast_b"], c["grid"]) == (256, 128, 2, False, 128)
    c = _C.select_fp8_gemm_config(512, 7168, 6000, 132)
    assert (c["waves"], c["cluster"], c["grid"]) == (1, 2, 112)
    c = _C.select_fp8_gemm_config(64, 7168, 6000, 132)
    assert (c["block_m"], c["waves"], c["cluster"]) == (64, 1, 2)
    assert _C.select_fp8_gemm_config(4096, 7168, 1408, 132)["cluster"] == 1  # 11 K blocks
    assert _C.select_fp8_gemm_config(4096, 7168, 1536, 132)["cluster"] == 1  # 128-byte rows
    # step 17: per-row B scales (dense), none but where rows are not 128-byte multiples or f32 out over long K; the
    # same tiles as without
    for m, n, k in ((4096, 7168, 16384), (7168, 2048, 4096), (2048, 7168, 8192)):
        per_row = _C.select_fp8_gemm_config(m, n, k, 132, b_scale_per_row=True)
        with monkeypatch.context() as mp:
            mp.setenv("DG_TUNE_CLUSTER", "2")
            clustered = _C.select_fp8_gemm_config(m, n, k, 132, b_scale_per_row=True)
        assert per_row["cluster"] == 1 and clustered["cluster"] == 2
        assert (per_row["block_m"], per_row["block_n"]) == (clustered["block_m"], clustered["block_n"])
    assert _C.select_fp8_gemm_config(4096, 7168, 7008, 132, b_scale_per_row=True)["cluster"] == 2
    assert _C.select_fp8_gemm_config(4096, 7168, 16384, 132, b_scale_per_row=True, out_f32=True)["cluster"] == 2
    assert _C.select_fp8_gemm_config(4096, 7168, 8192, 132, b_scale_per_row=True, out_f32=True)["cluster"] == 1
    monkeypatch.setenv("DG_TUNE_CLUSTER", "1")
    assert _C.select_fp8_gemm_config(4096, 7168, 7008, 132)["cluster"] == 1
    assert _C.select_fp8_gemm_config(4096, 2112, 7168, 132)["cluster"] == 1
    monkeypatch.setenv("DG_TUNE_CLUSTER", "2")  # where the N blocks pair up; the grid in whole clusters
    c = _C.select_fp8_gemm_config(4096, 7168, 16384, 132)
    assert (c["cluster"], c["grid"]) == (2, 128)
    c = _C.select_fp8_gemm_config(4096, 2112, 7168, 132)  # step 15's grid in whole clusters: 176 pairs, 3 rounds
    assert (c["cluster"], c["multicast_b"], c["grid"]) == (2, True, 118)
    assert _C.select_fp8_gemm_config(4096, 7168, 2048, 131)["grid"] == 130  # (16 K blocks: no step 14)
    assert _C.select_fp8_gemm_config(4096, 2112, 2048, 132)["cluster"] == 2
    c = _C.select_fp8_gemm_config(200, 7168, 2048, 132)
    assert (c["waves"], c["cluster"], c["grid"]) == (1, 2, 112)
    # an odd N-block count (133 of 16): dense GEMMs pair the last one's tiles along M, the grid in whole clusters
    # even where the tiles are fewer (3: the second pair's second tile is past M)
    assert _C.select_fp8_gemm_config(64, 2112 + 16, 7168, 132)["cluster"] == 2
    c = _C.select_fp8_gemm_config(64, 48, 7168, 132)
    assert (c["block_n"], c["tiles"], c["cluster"], c["grid"]) == (16, 3, 2, 4)
    monkeypatch.setenv("DG_TUNE_CLUSTER", "3")
    with pytest.raises(ValueError, match="DG_TUNE_CLUSTER=3"):
        _C.select_fp8_gemm_config(4096, 7168, 16384, 132)


def test_tune_multicast_b(monkeypatch):
    # unset: a dense cluster shares B where its tiles are wider than tall, A elsewhere; grouped clusters share A
    c = _C.select_fp8_gemm_config(4096, 2112, 7008, 132)
    assert (c["block_m"], c["block_n"], c["cluster"], c["multicast_b"]) == (128, 192, 2, True)
    c = _C.select_fp8_gemm_config(4096, 7168, 16384, 132)
    assert (c["block_m"], c["block_n"], c["cluster"], c["multicast_b"]) == (256, 128, 2, False)
    assert not _C.select_fp8_gemm_config(4096, 2112, 2048, 132)["multicast_b"]  # no cluster
    assert not _grouped("contiguous", 4 * 8192, 4096, 7168, 4)["multicast_b"]
    monkeypatch.setenv("DG_TUNE_MULTICAST_B", "0")
    assert not _C.select_fp8_gemm_config(4096, 2112, 7008, 132)["multicast_b"]
    monkeypatch.setenv("DG_TUNE_MULTICAST_B", "1")
    assert _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["multicast_b"]
    assert not _C.select_fp8_gemm_config(4096, 2112, 2048, 132)["multicast_b"]  # still no cluster
    monkeypatch.setenv("DG_TUNE_CLUSTER", "2")
    assert _C.select_fp8_gemm_config(4096, 2112, 2048, 132)["multicast_b"]
    # 3 x 3 tiles of 128 x 192 go to 2 x 3 pairs of M blocks (three of their tiles past M): 6 clusters
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "128")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "192")
    c = _C.select_fp8_gemm_config(300, 400, 2048, 132)
    assert (c["tiles"], c["cluster"], c["multicast_b"], c["grid"]) == (9, 2, True, 12)
    monkeypatch.delenv("DG_TUNE_BLOCK_M")
    monkeypatch.delenv("DG_TUNE_BLOCK_N")
    monkeypatch.setenv("DG_TUNE_MULTICAST_B", "2")
    with pytest.raises(ValueError, match="DG_TUNE_MULTICAST_B=2"):
        _C.select_fp8_gemm_config(4096, 7168, 16384, 132)


def test_tune_split_k(monkeypatch):
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "0")  # (single rounds split by the tail split: step 22's tests)
    # unset: the model (step 9) splits small-M, long-K GEMMs whose tiles fit one wave twice over
    c = _C.select_fp8_gemm_config(128, 2112, 7168, 132)
    assert (c["block_m"], c["block_n"], c["split_k"], c["cluster"], c["grid"]) == (128, 32, 2, 1, 132)
    c = _C.select_fp8_gemm_config(64, 2112, 7168, 132)
    assert (c["block_m"], c["block_n"], c["tiles"], c["split_k"], c["stages"]) == (64, 32, 66, 2, 16)
    # but not where the HBM stream of B sets the pace either way (twice as wide tiles stream twice the bytes) ...
    for m, n, k in ((64, 4096, 7168), (128, 4096, 7168), (64, 7168, 16384)):
        assert _C.select_fp8_gemm_config(m, n, k, 132)["split_k"] == 1, (m, n, k)
    # ... nor into 128 x 128 tiles, whose wgmma per K block costs what the copies of 128 x 64 ones do
    for m, n, k in ((128, 7168, 16384), (256, 4096, 7168)):
        for hbm_gbs in (0, 3352, 4917):
            c = _C.select_fp8_gemm_config(m, n, k, 132, hbm_gbs=hbm_gbs)
            assert (c["block_m"], c["block_n"], c["split_k"]) == (128, 64, 1), (m, n, k, hbm_gbs)
    # The H100's own bandwidth is the rate assumed when it is unknown; the H200's faster HBM makes the stream of B
    # cheaper, so N = 4096 (M <= 128) and 256 x 2112 x 7168 split there (measured faster on an H200 only, NOTES 22)
    for m, n, k in ((64, 4096, 7168), (128, 4096, 7168), (256, 2112, 7168), (64, 7168, 16384), (128, 2112, 7168)):
        assert _C.select_fp8_gemm_config(m, n, k, 132, hbm_gbs=3352) == _C.select_fp8_gemm_config(m, n, k, 132)
    for m, n, k, bm in ((64, 4096, 7168, 64), (128, 4096, 7168, 128), (256, 2112, 7168, 128)):
        c = _C.select_fp8_gemm_config(m, n, k, 132, hbm_gbs=4917)
        assert (c["block_m"], c["block_n"], c["split_k"], c["grid"]) == (bm, 64, 2, 2 * c["tiles"]), (m, n, k)
    assert _C.select_fp8_gemm_config(64, 7168, 16384, 132, hbm_gbs=4917)["split_k"] == 1
    # 128 x 160 split tiles would pay in the model at an H200's rate, but keep 3 stages (NOTES 22, 30): not taken
    c = _C.select_fp8_gemm_config(256, 5120, 7168, 132, hbm_gbs=4917)
    assert (c["block_m"], c["block_n"], c["split_k"]) == (128, 128, 1)
    monkeypatch.setenv("DG_TUNE_SPLIT_K", "2")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "160")
    assert _C.select_fp8_gemm_config(256, 5120, 7168, 132, hbm_gbs=4917)["stages"] == 3
    monkeypatch.delenv("DG_TUNE_SPLIT_K")
    monkeypatch.delenv("DG_TUNE_BLOCK_N")
    with pytest.raises(ValueError, match="hbm_gbs must be >= 0"):
        _C.select_fp8_gemm_config(128, 4096, 7168, 132, hbm_gbs=-1)
    monkeypatch.setenv("DG_TUNE_SPLIT_K", "0")  # the same
    c = _C.select_fp8_gemm_config(128, 2112, 7168, 132)
    assert (c["block_m"], c["block_n"], c["split_k"], c["cluster"], c["grid"]) == (128, 32, 2, 1, 132)
    assert _C.select_fp8_gemm_config(128, 7168, 2048, 132)["split_k"] == 1  # 16 K blocks: the exchange costs more
    assert _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["split_k"] == 1  # many waves
    monkeypatch.setenv("DG_TUNE_CLUSTER", "2")  # forced multicast keeps its clusters
    assert _C.select_fp8_gemm_config(128, 2112, 7168, 132)["split_k"] == 1
    monkeypatch.delenv("DG_TUNE_CLUSTER")
    monkeypatch.setenv("DG_TUNE_SPLIT_K", "1")
    assert _C.select_fp8_gemm_config(128, 2112, 7168, 132)["split_k"] == 1
    # forced: any BLOCK_M <= 128 problem, the tile of the unsplit choice, several waves and multicast given up alike
    monkeypatch.setenv("DG_TUNE_SPLIT_K", "4")
    monkeypatch.setenv("DG_TUNE_CLUSTER", "2")
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "128")
    with pytest.raises(ValueError, match="partial tiles of 128 x 192 leave no room for two stages"):
        _C.select_fp8_gemm_config(1000, 7168, 2048, 78)
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "64")
    c = _C.select_fp8_gemm_config(1000, 7168, 2048, 78)
    assert (c["block_m"], c["block_n"], c["split_k"], c["cluster"], c["grid"]) == (128, 64, 4, 1, 76) and c["waves"] > 1
    assert c["smem_bytes"] <= SMEM_LIMIT and c["stages"] >= 2
    monkeypatch.delenv("DG_TUNE_BLOCK_M")
    monkeypatch.delenv("DG_TUNE_BLOCK_N")
    c = _C.select_fp8_gemm_config(7, 16, 128, 132)  # one K block: three of the four CTAs get none
    assert (c["split_k"], c["grid"]) == (4, 4)
    assert _C.select_fp8_gemm_config(0, 16, 128, 132)["grid"] == 0
    with pytest.raises(ValueError, match="DG_TUNE_SPLIT_K=4 needs at least that many SMs"):
        _C.select_fp8_gemm_config(64, 2112, 7168, 3)
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "256")
    with pytest.raises(ValueError, match="DG_TUNE_SPLIT_K=4 needs BLOCK_M <= 128"):
        _C.select_fp8_gemm_config(4096, 7168, 2048, 132)
    monkeypatch.delenv("DG_TUNE_BLOCK_M")
    monkeypatch.setenv("DG_TUNE_SPLIT_K", "3")
    with pytest.raises(ValueError, match="DG_TUNE_SPLIT_K=3 is not 1, 2 or 4"):
        _C.select_fp8_gemm_config(64, 2112, 7168, 132)


def _grouped(grouping, m, n, k, g, **kw):
    return _C.select_fp8_gemm_config(m, n, k, 132, grouping=grouping, num_groups=g, **kw)


def test_grouped_clusters(monkeypatch):
    """Clusters of 2 by default only where they measured faster (heuristics.cc, step 5): contiguous and ragged with
    256-row tiles, k-grouped with 256-row tiles or 128-row ones and at most 4 groups (not with the TMA store, step
    17), the other grouped modes' 128- and 256-row tiles where K % 32 != 0; at least two waves and an even N-block
    count."""
    for grouping in ("contiguous", "ragged"):
        c = _grouped(grouping, 4 * 8192, 4096, 7168, 4)
        assert (c["block_m"], c["cluster"], c["grid"]) == (256, 2, 132), c
        c = _grouped(grouping, 32 * 128, 4096, 7168, 32)  # short runs: 128-row tiles
        assert (c["block_m"], c["cluster"]) == (128, 1), c
        assert _grouped(grouping, 4 * 8192, 4096 + 128, 7168, 4)["cluster"] == 1  # 33 N blocks: no pairs
        c = _grouped(grouping, 32 * 128, 4096, 2000, 32)  # 128-row tiles over rows crossing 32-byte sectors
        assert (c["block_m"], c["cluster"]) == (128, 2), c
        assert _grouped(grouping, 32 * 128, 4096, 2016, 32)["cluster"] == 1  # rows of whole sectors
        assert _grouped(grouping, 1024, 4096, 2000, 16)["block_m"] == 64  # 64-row tiles: unmeasured, none
        assert _grouped(grouping, 1024, 4096, 2000, 16)["cluster"] == 1
    per_row = {"b_scale_per_row": True, "out_f32": True, "c_kind": 2}
    for g in (4, 8):  # 256 x 128 k-grouped tiles: clusters whatever the groups (4 groups: 28 rounds on 128 CTAs,
        # step 14; 8 groups: 55 rounds on 132, which 128 would make 56)
        c = _grouped("k_grouped", 4096, 7168, g * 8192, g, **per_row)
        assert (c["block_m"], c["cluster"], c["grid"]) == (256, 2, 128 if g == 4 else 132), c
    assert _grouped("k_grouped", 4096, 7168 + 128, 4 * 8192, 4, **per_row)["cluster"] == 1  # 57 N blocks: no pairs
    # step 17: k-grouped tiles with the TMA store (bf16 out over at most 16 K blocks per group) take none
    bf16 = {"b_scale_per_row": True, "out_f32": False}
    c = _grouped("k_grouped", 4096, 7168, 8 * 2048, 8, **bf16)
    assert (c["block_m"], c["tma_store"], c["cluster"]) == (256, True, 1), c
    assert _grouped("k_grouped", 4096, 7168, 8 * 2048, 8, **per_row)["cluster"] == 2  # f32 out with C: clusters
    c = _grouped("k_grouped", 4096, 7168, 4 * 8192, 4, **bf16)  # long K: no TMA store, clusters
    assert (c["tma_store"], c["cluster"]) == (False, 2), c
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "128")
    assert _grouped("k_grouped", 4096, 7168, 4 * 8192, 4, **per_row)["cluster"] == 2
    assert _grouped("k_grouped", 4096, 7168, 8 * 4096, 8, **per_row)["cluster"] == 1
    assert _grouped("k_grouped", 256, 256, 4 * 1024, 4, **per_row)["waves"] == 1  # a lone wave: as it was
    assert _grouped("k_grouped", 256, 256, 4 * 1024, 4, **per_row)["cluster"] == 1
    monkeypatch.delenv("DG_TUNE_BLOCK_M")
    assert _grouped("masked", 4096, 4096, 7168, 4, expected_m=256)["cluster"] == 1
    assert _grouped("masked", 4096, 4096, 7008, 4, expected_m=256)["cluster"] == 1  # rows of whole sectors
    c = _grouped("masked", 4096, 7168, 6000, 4, expected_m=256)  # rows crossing 32-byte sectors
    assert (c["cluster"], c["tail_split"]) == (2, False), c
    monkeypatch.setenv("DG_TUNE_CLUSTER", "1")
    assert _grouped("contiguous", 4 * 8192, 4096, 7168, 4)["cluster"] == 1
    assert _grouped("masked", 4096, 7168, 6000, 4, expected_m=256)["cluster"] == 1
    assert _grouped("ragged", 32 * 128, 4096, 2000, 32)["cluster"] == 1
    assert _grouped("k_grouped", 4096, 7168, 4 * 8192, 4, **per_row)["cluster"] == 1
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "128")
    assert _grouped("k_grouped", 4096, 7168, 4 * 8192, 4, **per_row)["cluster"] == 1
    monkeypatch.delenv("DG_TUNE_BLOCK_M")
    monkeypatch.setenv("DG_TUNE_CLUSTER", "2")
    assert _grouped("masked", 4096, 4096, 7168, 4, expected_m=256)["cluster"] == 2


def test_tune_tma_store(monkeypatch):
    c = _C.select_fp8_gemm_config(4096, 7168, 16384, 132)  # on by default
    assert c["tma_store"] and (c["block_m"], c["block_n"]) == (256, 128)
    assert c["stages"] == 3 and c["smem_bytes"] <= SMEM_LIMIT  # the 64 KB staging tile costs a stage
    # Only bf16 out without C, not k-grouped, N % 8 == 0; any width (column atoms of 64, 32 or 16).
    assert not _C.select_fp8_gemm_config(4096, 7168, 16384, 132, out_f32=True)["tma_store"]
    assert not _C.select_fp8_gemm_config(4096, 7168, 16384, 132, c_kind=1)["tma_store"]
    with pytest.raises(ValueError, match="c_kind must be 0"):
        _C.select_fp8_gemm_config(4096, 7168, 16384, 132, c_kind=3)
    assert not _C.select_fp8_gemm_config(4096, 7164, 16384, 132)["tma_store"]
    for grouping in ("contiguous", "ragged", "masked"):  # the ragged and masked kernels use it for full tiles
        c = _C.select_fp8_gemm_config(8192, 4096, 7168, 132, grouping=grouping, num_groups=4)
        assert c["tma_store"], grouping
    # From 2 tiles per CTA on it is taken (its stores overlap the next tile), 160-wide tiles too (five 32-column atoms)
    c = _C.select_fp8_gemm_config(2048, 6400, 2048, 132)
    assert (c["block_n"], c["waves"], c["tma_store"], c["stages"]) == (160, 5, True, 5), c
    # with one tile per CTA only where it costs no stage: not on 160- or 128-wide tiles over long K ...
    c = _C.select_fp8_gemm_config(512, 5120, 7168, 132)
    assert (c["block_n"], c["waves"], c["tma_store"], c["stages"]) == (160, 1, False, 6), c
    c = _C.select_fp8_gemm_config(256, 7168, 2048, 132)
    assert (c["block_m"], c["block_n"], c["waves"], c["tma_store"], c["stages"]) == (128, 128, 1, False, 6), c
    # ... but on the small-M tiles whose stages K caps, and not on split-K ones
    for m, n, k, store in ((64, 7168, 16384, True), (128, 4096, 7168, True), (64, 2112, 7168, False)):
        c = _C.select_fp8_gemm_config(m, n, k, 132)
        assert c["waves"] == 1 and c["tma_store"] == store and c["split_k"] == (1 if store else 2), (m, n, k, c)
    # grouped GEMMs take it wherever it applies, whatever it costs (one tile per CTA measured faster with it)
    for grouping in ("contiguous", "ragged", "masked"):
        c = _C.select_fp8_gemm_config(1024, 2048, 2048, 132, grouping=grouping, num_groups=1, expected_m=1024)
        assert (c["block_m"], c["block_n"], c["waves"], c["tma_store"], c["stages"]) == (128, 128, 1, True, 5), c
    monkeypatch.setenv("DG_TUNE_TMA_STORE", "1")  # forced: wherever it is supported
    c = _C.select_fp8_gemm_config(512, 5120, 7168, 132)
    assert (c["block_n"], c["tma_store"], c["stages"]) == (160, True, 5), c
    assert _C.select_fp8_gemm_config(64, 2112, 7168, 132)["tma_store"]
    monkeypatch.delenv("DG_TUNE_TMA_STORE")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "128")  # a width it could take, but k-grouped writes FP32 with C
    assert not _C.select_fp8_gemm_config(4096, 7168, 4096 * 4, 132, grouping="k_grouped", num_groups=4, out_f32=True,
                                         c_kind=2)["tma_store"]
    monkeypatch.setenv("DG_TUNE_TMA_STORE", "0")
    c = _C.select_fp8_gemm_config(4096, 7168, 16384, 132)
    assert not c["tma_store"] and c["stages"] == 4


def test_heuristic_per_row_scale_cap():
    # Per-row (1x128) B scales cost the kernel registers: BLOCK_N stays at or below 176 (M = 128: 128-row tiles).
    assert _C.select_fp8_gemm_config(128, 768, 1024, 4)["block_n"] == 192
    assert _C.select_fp8_gemm_config(128, 768, 1024, 4, b_scale_per_row=True)["block_n"] <= 176


def test_heuristic_examples():
    # M=256, N=7168 on 132 SMs: BLOCK_N=128 makes 2 x 56 = 112 tiles in one wave; 112 (one wave of 128 tiles) would
    # straddle 128-column scale blocks, any width below 128 needs two waves.
    c = _C.select_fp8_gemm_config(256, 7168, 2048, 132)
    assert (c["block_m"], c["block_n"], c["waves"], c["grid"]) == (128, 128, 1, 112)
    # M=4096, N=4096: 256x128 tiles (4 waves, cost 4 x 320) beat 128x128 (8 x 192) and 128x192 (6 x 256).
    c = _C.select_fp8_gemm_config(4096, 4096, 7168, 132)
    assert (c["block_m"], c["block_n"], c["waves"]) == (256, 128, 4)
    # Small M fills the SMs with narrow tiles, or over long K with tiles twice as wide, each split over 2 CTAs.
    c = _C.select_fp8_gemm_config(64, 2112, 7168, 132)
    assert (c["block_m"], c["block_n"], c["tiles"], c["split_k"], c["grid"]) == (64, 32, 66, 2, 132)
    c = _C.select_fp8_gemm_config(64, 2112, 1024, 132)
    assert (c["block_m"], c["block_n"], c["tiles"], c["split_k"], c["grid"]) == (64, 16, 132, 1, 132)


def test_print_configs_once_per_shape(tmp_path):
    """Once per shape and configuration; a new value of DG_PRINT_CONFIGS prints them again (the GPU config tests)."""
    script = ("import os\n"
              "from jax_deepgemm import _C\n"
              "for _ in range(3): _C.select_fp8_gemm_config(256, 7168, 2048, 132)\n"
              "_C.select_fp8_gemm_config(512, 7168, 2048, 132)\n"
              "os.environ['DG_PRINT_CONFIGS'] = '2'\n"
              "for _ in range(2): _C.select_fp8_gemm_config(256, 7168, 2048, 132)\n")
    env = clean_env(DG_PRINT_CONFIGS="1")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "fp8_gemm m=" in line]
    assert len(lines) == 3, proc.stderr
    assert "m=256 n=7168 k=2048" in lines[0] and "block_n=128" in lines[0]
    assert lines[2] == lines[0]


@pytest.mark.parametrize("bad", [dict(k=100), dict(k=0), dict(n=0), dict(m=-1), dict(num_sms=0), dict(c_kind=3),
                                 dict(sms_cap=-1), dict(arch="sm90"), dict(arch="sm_90a; rm -rf /")])
def test_invalid_problem_raises_value_error(stub_dir, bad):
    _C.configure(str(stub_dir), nvrtc_candidates())
    with pytest.raises(ValueError):
        _C.compile_fp8_gemm(**{**PROBLEM, **bad})


# ---------------------------------------------------------------------------------------------------------------
# Compilation and caches


@needs_nvrtc
def test_nvrtc_compile_then_memory_hit(stub_dir, tmp_path, monkeypatch):
    _C.configure(str(stub_dir), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "1")
    r = _C.compile_fp8_gemm(**PROBLEM)
    assert r["cache"] == "compiled"
    assert r["compiler"].startswith("NVRTC ")
    assert r["seconds"] > 0
    assert r["kernel"].startswith("jdg_fp8_gemm_n7168_k2048_")
    assert set(r["config"]) >= {"block_m", "block_n", "stages", "num_threads", "smem_bytes", "grid"}
    assert r["config"] == {**_C.select_fp8_gemm_config(256, 7168, 2048, 132)}
    for macro in MACROS:
        assert f"#define {macro} " in r["source"]
    assert r["source"].rstrip().endswith("#include <jax_deepgemm/fp8_gemm.cuh>")
    entry = tmp_path / "jit_cache" / "cache" / f"{r['kernel']}.{r['digest']}"
    assert (entry / "kernel.cu").read_text() == r["source"]
    assert (entry / "kernel.cubin").read_bytes()[:4] == b"\x7fELF"
    assert (entry / "kernel.meta").exists()
    assert not list((tmp_path / "jit_cache" / "tmp").iterdir())

    again = _C.compile_fp8_gemm(**PROBLEM)
    assert again["cache"] == "memory"
    assert (again["kernel"], again["digest"]) == (r["kernel"], r["digest"])

    # Every flag is part of the kernel name and the key.
    flipped = _C.compile_fp8_gemm(**{**PROBLEM, "a_e5m2": True, "out_f32": True, "c_kind": 2})
    assert flipped["cache"] == "compiled" and flipped["kernel"] != r["kernel"]
    assert "#define JDG_A_E5M2 1" in flipped["source"] and "#define JDG_C_KIND 2" in flipped["source"]


@needs_nvrtc
def test_sms_cap_applies_in_the_extension(stub_dir, monkeypatch):
    """The cap (set_num_sms's, the custom call's sms_cap) is applied where the configuration is chosen, once for the
    handler and ahead-of-time compilation: a cap under the SM count plans for the cap, one over it changes nothing."""
    _C.configure(str(stub_dir), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "1")
    capped = _C.compile_fp8_gemm(**{**PROBLEM, "sms_cap": 66})
    assert capped["num_sms"] == 66
    assert capped["config"] == _C.select_fp8_gemm_config(256, 7168, 2048, 66)
    assert capped["config"]["grid"] <= 66
    over = _C.compile_fp8_gemm(**{**PROBLEM, "sms_cap": 200})
    assert over["num_sms"] == 132 and over["kernel"] == _C.compile_fp8_gemm(**PROBLEM)["kernel"]


@needs_nvcc
def test_nvcc_compile(stub_dir, monkeypatch):
    _C.configure(str(stub_dir), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "0")
    monkeypatch.setenv("DG_JIT_PTXAS_VERBOSE", "1")
    r = _C.compile_fp8_gemm(**PROBLEM)
    assert r["cache"] == "compiled"
    assert r["compiler"].startswith("NVCC ")
    assert "registers" in r["log"]  # ptxas -v statistics
    assert _C.compile_fp8_gemm(**PROBLEM)["cache"] == "memory"


@pytest.mark.parametrize("use_nvrtc", [pytest.param("1", marks=needs_nvrtc), pytest.param("0", marks=needs_nvcc)])
def test_register_usage_level_reaches_ptxas_and_the_key(stub_dir, monkeypatch, capfd, use_nvrtc):
    _C.configure(str(stub_dir), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", use_nvrtc)
    monkeypatch.setenv("DG_JIT_PRINT_COMPILER_COMMAND", "1")
    plain = _C.compile_fp8_gemm(**PROBLEM)
    monkeypatch.setenv("DG_JIT_REGISTER_USAGE_LEVEL", "10")
    leveled = _C.compile_fp8_gemm(**PROBLEM)
    assert leveled["cache"] == "compiled" and leveled["digest"] != plain["digest"]
    commands = capfd.readouterr().err
    assert commands.count("register-usage-level=10") == 1, commands
    for bad in ("11", "-1", "ten"):
        monkeypatch.setenv("DG_JIT_REGISTER_USAGE_LEVEL", bad)
        with pytest.raises(ValueError, match="DG_JIT_REGISTER_USAGE_LEVEL"):
            _C.compile_fp8_gemm(**PROBLEM)


@needs_nvcc
def test_auto_choice_falls_back_to_nvcc(stub_dir, tmp_path):
    """With DG_JIT_USE_NVRTC unset, a process whose libnvrtc cannot be loaded compiles with NVCC."""
    script = textwrap.dedent(f"""
        import json
        from jax_deepgemm import _C
        _C.configure({str(stub_dir)!r}, ["/nonexistent/libnvrtc.so.13"])
        nvrtc = _C.runtime_info()["nvrtc"]["available"]
        print(json.dumps([nvrtc, _C.compile_fp8_gemm(**{PROBLEM!r})["compiler"]]))
    """)
    env = clean_env(DG_JIT_CACHE_DIR=str(tmp_path / "jit_cache"))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    nvrtc, compiler = json.loads(proc.stdout.strip().splitlines()[-1])
    assert compiler.startswith("NVRTC" if nvrtc else "NVCC")


@pytest.mark.parametrize("nvcc", ["/nonexistent/bin/nvcc", "/bin/false", "no-such-nvcc-on-path"])
def test_broken_nvcc_raises_naming_the_kernel(stub_dir, nvcc, monkeypatch):
    _C.configure(str(stub_dir), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "0")
    monkeypatch.setenv("DG_JIT_NVCC_COMPILER", nvcc)
    with pytest.raises(RuntimeError) as info:
        _C.compile_fp8_gemm(**PROBLEM)
    name = _C.select_fp8_gemm_config(256, 7168, 2048, 132)
    assert "jdg_fp8_gemm_n7168_k2048_" in str(info.value)
    assert f"_bn{name['block_n']}_" in str(info.value)
    assert nvcc.split("/")[-1] in str(info.value)


def fake_nvcc(tmp_path, compile_action: str) -> str:
    """An 'nvcc' that reports a release and then fails to compile as `compile_action` (shell) says."""
    path = tmp_path / "fake-nvcc"
    path.write_text("#!/bin/sh\n"
                    'if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 13.0, V13.0.0"; exit 0; fi\n'
                    f"{compile_action}\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("action,expected", [
    ('echo "kernel.cu(3): error: the compiler log reaches the user" >&2; exit 2',
     r"nvcc exit code 2\).*\n.*error: the compiler log reaches the user"),
    ('echo "about to crash"; kill -SEGV $$', r"nvcc exit code -11\).*\n.*about to crash"),
    ('echo "wrote nothing"; exit 0', r"nvcc produced no cubin.*\n.*wrote nothing"),
], ids=["error-log", "killed-by-signal", "no-cubin"])
def test_failing_nvcc_raises_with_its_log(stub_dir, tmp_path, monkeypatch, action, expected):
    """Whatever the compiler does (fails with a log, crashes, writes nothing), the caller gets a RuntimeError that
    names the kernel and holds the compiler's output, and nothing is cached."""
    _C.configure(str(stub_dir), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "0")
    monkeypatch.setenv("DG_JIT_NVCC_COMPILER", fake_nvcc(tmp_path, action))
    with pytest.raises(RuntimeError, match="compiling kernel jdg_fp8_gemm_n7168_k2048_") as info:
        _C.compile_fp8_gemm(**PROBLEM)
    assert re.search(expected, str(info.value)), str(info.value)
    assert "NVCC 13.0" in str(info.value) and "fake-nvcc" in str(info.value)
    assert not (tmp_path / "jit_cache" / "cache").exists() or not list((tmp_path / "jit_cache" / "cache").iterdir())


@needs_compiler
@pytest.mark.parametrize("use_nvrtc", ["1", "0"])
def test_compile_error_names_kernel_and_shows_log(tmp_path, use_nvrtc, monkeypatch):
    if use_nvrtc == "1" and not have_nvrtc():
        pytest.skip("libnvrtc not found")
    if use_nvrtc == "0" and not have_nvcc():
        pytest.skip("nvcc not found")
    broken = make_include_dir(tmp_path / "broken", STUB_KERNEL + "\nthis_is_not_cuda;\n")
    _C.configure(str(broken), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", use_nvrtc)
    with pytest.raises(RuntimeError) as info:
        _C.compile_fp8_gemm(**PROBLEM)
    message = str(info.value)
    assert "jdg_fp8_gemm_n7168_k2048_" in message
    assert "this_is_not_cuda" in message  # the compiler log is part of the error
    # Failures are not cached: fixing the header makes the next compile succeed.
    (broken / "jax_deepgemm" / "fp8_gemm.cuh").write_text(STUB_KERNEL + "// fixed\n")
    _C.configure(str(broken), nvrtc_candidates())
    assert _C.compile_fp8_gemm(**PROBLEM)["cache"] == "compiled"


def test_unconfigured_or_missing_include_dir(tmp_path):
    _C.configure(str(tmp_path / "missing"), nvrtc_candidates())
    with pytest.raises(RuntimeError, match="does not exist"):
        _C.compile_fp8_gemm(**PROBLEM)


# ---------------------------------------------------------------------------------------------------------------
# The real kernel


REAL_VARIANTS = [
    dict(),
    dict(m=64, n=2112, k=7168),
    dict(m=4096, n=7168, k=2048),
    dict(m=100, n=300, k=272, c_kind=1),
    dict(m=512, n=4096, k=4096, out_f32=True, c_kind=2, b_scale_per_row=True),
    dict(m=128, n=1024, k=512, a_e5m2=True, b_e5m2=True),
]


@needs_real_kernel
@needs_nvrtc
@pytest.mark.parametrize("variant", REAL_VARIANTS, ids=lambda v: ",".join(f"{k}={x}" for k, x in v.items()) or "base")
def test_real_kernel_compiles_nvrtc(variant, monkeypatch):
    _C.configure(str(CUDA_DIR), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "1")
    r = _C.compile_fp8_gemm(**{**PROBLEM, **variant})
    assert r["cache"] == "compiled" and r["compiler"].startswith("NVRTC")
    assert r["cubin_size"] > 0


@needs_real_kernel
@needs_nvrtc
@pytest.mark.parametrize("variant", [dict(m=64, n=2112, k=7168), dict(m=4096, n=7168, k=16384),
                                     dict(m=4096, n=7168, k=4 * 8192, grouping="k_grouped", num_groups=4,
                                          out_f32=True, c_kind=2, b_scale_per_row=True)],
                         ids=["small_m", "dense_256_rows", "k_grouped"])
def test_profile_waits_variant_is_its_own_kernel(variant, monkeypatch):
    # DG_PROFILE_WAITS compiles a separately named kernel (never confused with the default one in the cache) whose
    # barrier waits are timed and printed; it must compile (device printf under NVRTC) for every kind of tile.
    _C.configure(str(CUDA_DIR), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "1")
    default = _C.compile_fp8_gemm(**{**PROBLEM, **variant})
    monkeypatch.setenv("DG_PROFILE_WAITS", "1")
    r = _C.compile_fp8_gemm(**{**PROBLEM, **variant})
    assert r["kernel"] == default["kernel"] + "_pw" and r["cache"] == "compiled" and r["cubin_size"] > 0
    assert "#define JDG_PROFILE_WAITS 1" in r["source"] and "JDG_PROFILE_WAITS" not in default["source"]


@needs_real_kernel
@needs_nvrtc
@pytest.mark.parametrize("variant", [dict(m=4096, n=7168, k=16384), dict(m=64, n=2112, k=7168),
                                     dict(m=512, n=4096, k=4096, out_f32=True, c_kind=2, b_scale_per_row=True),
                                     dict(m=8192, n=4096, k=7168, grouping="contiguous", num_groups=4)],
                         ids=["dense", "small_m", "per_row_c", "contiguous"])
def test_real_kernel_compiles_with_the_accumulator_pipeline(variant, monkeypatch):
    _C.configure(str(CUDA_DIR), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "1")
    monkeypatch.setenv("DG_TUNE_ACC_PIPELINE", "1")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "128")
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "64" if variant["m"] <= 64 else "128")
    r = _C.compile_fp8_gemm(**{**PROBLEM, **variant})
    assert r["config"]["acc_pipeline"] and "#define JDG_ACC_PIPELINE 1" in r["source"]
    # "memory": the default configuration of an earlier test was the same kernel (the pipeline is on by default)
    assert r["cache"] in ("compiled", "memory") and r["cubin_size"] > 0


def test_tune_acc_pipeline(monkeypatch):
    c = _C.select_fp8_gemm_config(64, 2112, 7168, 132)
    assert (c["block_m"], c["block_n"], c["acc_pipeline"]) == (64, 32, True)  # on wherever it applies ...
    assert not _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["acc_pipeline"]  # (256-row tiles: two waves)
    k_grouped = dict(grouping="k_grouped", num_groups=4, out_f32=True, c_kind=2, b_scale_per_row=True)
    c = _C.select_fp8_gemm_config(128, 7168, 4 * 8192, 132, **k_grouped)
    assert c["block_m"] == 128 and c["block_n"] <= 128 and c["acc_pipeline"], c  # k-grouped included
    monkeypatch.setenv("DG_TUNE_ACC_PIPELINE", "0")
    assert not _C.select_fp8_gemm_config(64, 2112, 7168, 132)["acc_pipeline"]
    assert not _C.select_fp8_gemm_config(128, 7168, 4 * 8192, 132, **k_grouped)["acc_pipeline"]
    monkeypatch.setenv("DG_TUNE_ACC_PIPELINE", "1")
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "128")
    c = _C.select_fp8_gemm_config(4096, 7168, 16384, 132)
    assert c["acc_pipeline"] == (c["block_n"] <= 128)
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "192")  # three accumulator sets of 96 registers do not fit
    assert not _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["acc_pipeline"]


def test_tune_paired_stages(monkeypatch):
    # on by default for pipelined kernels with at least 10 stages: 64 x 32 (16), 128 x 32 (10), 64 x 64 (13) ...
    for m, n, k in [(64, 2112, 7168), (128, 4096, 7168), (64, 7168, 16384)]:
        c = _C.select_fp8_gemm_config(m, n, k, 132)
        assert c["acc_pipeline"] and c["stages"] >= 10 and c["paired_stages"], c
    # ... not with fewer (masked 128 x 128: 5, dense 128 x 64: 8), nor without the pipeline (256-row tiles)
    masked = dict(grouping="masked", num_groups=4, expected_m=256)
    c = _C.select_fp8_gemm_config(4096, 4096, 2048, 132, **masked)
    assert c["acc_pipeline"] and c["stages"] < 10 and not c["paired_stages"], c
    c = _C.select_fp8_gemm_config(128, 7168, 2048, 132)
    assert c["acc_pipeline"] and c["stages"] < 10 and not c["paired_stages"], c
    assert not _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["paired_stages"]
    monkeypatch.setenv("DG_TUNE_PAIRED_STAGES", "1")  # forced: every pipelined kernel with >= 4 stages
    assert _C.select_fp8_gemm_config(4096, 4096, 2048, 132, **masked)["paired_stages"]
    assert not _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["paired_stages"]
    monkeypatch.setenv("DG_TUNE_PAIRED_STAGES", "0")
    assert not _C.select_fp8_gemm_config(64, 2112, 7168, 132)["paired_stages"]


def test_tune_stages(monkeypatch):
    masked = dict(grouping="masked", num_groups=1, expected_m=1024)
    assert _C.select_fp8_gemm_config(4096, 7168, 2048, 132, **masked)["stages"] == 5  # as many as fit
    assert _C.select_fp8_gemm_config(64, 2112, 7168, 132)["stages"] == 16  # capped at 16
    monkeypatch.setenv("DG_TUNE_STAGES", "3")  # a cap: every kernel at most 3, the tiles chosen as before
    c = _C.select_fp8_gemm_config(4096, 7168, 2048, 132, **masked)
    assert (c["block_m"], c["block_n"], c["stages"]) == (128, 128, 3), c
    assert _C.select_fp8_gemm_config(64, 2112, 7168, 132)["stages"] == 3
    monkeypatch.setenv("DG_TUNE_STAGES", "40")  # above what fits: as unset
    assert _C.select_fp8_gemm_config(4096, 7168, 2048, 132, **masked)["stages"] == 5
    for bad in ("1", "x", "-2"):
        monkeypatch.setenv("DG_TUNE_STAGES", bad)
        with pytest.raises(ValueError, match="DG_TUNE_STAGES"):
            _C.select_fp8_gemm_config(4096, 7168, 2048, 132)


def test_tune_split_halves(monkeypatch):
    c = _C.select_fp8_gemm_config(6144, 2112, 7168, 132)  # on by default wherever it applies
    assert (c["block_m"], c["block_n"], c["split_halves"]) == (128, 192, True)
    monkeypatch.setenv("DG_TUNE_SPLIT_HALVES", "0")
    assert not _C.select_fp8_gemm_config(6144, 2112, 7168, 132)["split_halves"]
    monkeypatch.setenv("DG_TUNE_SPLIT_HALVES", "1")
    assert not _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["split_halves"]  # 256-row tiles
    assert not _C.select_fp8_gemm_config(64, 2112, 7168, 132)["split_halves"]  # 64 x 32 (split K): the pipeline's
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "128")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "160")
    assert _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["split_halves"]
    assert not _C.select_fp8_gemm_config(4096, 7168, 16384, 132, b_scale_per_row=True)["split_halves"]
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "144")  # halves of 72: not a width the kernel has
    assert not _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["split_halves"]
    monkeypatch.setenv("DG_TUNE_SPLIT_HALVES", "0")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "192")
    assert not _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["split_halves"]


@needs_nvrtc
@pytest.mark.parametrize("variant", [dict(m=6144, n=2112, k=7168), dict(m=8192, n=4096, k=7168, grouping="contiguous",
                                                                         num_groups=16)], ids=["dense", "contiguous"])
def test_real_kernel_compiles_with_split_halves(variant, monkeypatch):
    _C.configure(str(CUDA_DIR), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "1")
    monkeypatch.setenv("DG_TUNE_SPLIT_HALVES", "1")
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "128")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "192")
    r = _C.compile_fp8_gemm(**{**PROBLEM, **variant})
    assert r["config"]["split_halves"] and "#define JDG_SPLIT_HALVES 1" in r["source"]
    assert r["cubin_size"] > 0


@needs_nvrtc
@pytest.mark.parametrize("variant,split_k", [(dict(m=64, n=2112, k=7168), "0"), (dict(m=128, n=7168, k=2048), "4")],
                         ids=["model", "forced"])
def test_real_kernel_compiles_with_split_k(variant, split_k, monkeypatch):
    _C.configure(str(CUDA_DIR), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "1")
    monkeypatch.setenv("DG_TUNE_SPLIT_K", split_k)
    r = _C.compile_fp8_gemm(**{**PROBLEM, **variant})
    parts = r["config"]["split_k"]
    assert parts == (2 if split_k == "0" else 4) and f"#define JDG_SPLIT_K {parts}" in r["source"]
    assert r["cubin_size"] > 0


def test_k_grouped_tma_store_over_short_k_only(monkeypatch):
    """k-grouped bf16 outputs take the TMA store (and its stage) where a tile streams at most 16 K blocks (the MoE
    step's ~1024 tokens per expert), not over long K, never f32 ones; DG_TUNE_TMA_STORE=0 / 1 decides anywhere."""
    bf16 = {"b_scale_per_row": True, "out_f32": False}
    short, long = (7168, 4096, 16 * 1024, 16), (4096, 7168, 4 * 8192, 4)
    assert _grouped("k_grouped", *short, **bf16)["tma_store"] and _grouped("k_grouped", *short, **bf16)["stages"] == 3
    assert _grouped("k_grouped", 7168, 4096, 16 * 2048, 16, **bf16)["tma_store"]  # 16 K blocks
    assert not _grouped("k_grouped", 7168, 4096, 16 * 2176, 16, **bf16)["tma_store"]  # 17
    assert not _grouped("k_grouped", *long, **bf16)["tma_store"] and _grouped("k_grouped", *long, **bf16)["stages"] == 4
    assert not _grouped("k_grouped", *short, b_scale_per_row=True, out_f32=True)["tma_store"]
    monkeypatch.setenv("DG_TUNE_TMA_STORE", "1")
    assert _grouped("k_grouped", *long, **bf16)["tma_store"]
    monkeypatch.setenv("DG_TUNE_TMA_STORE", "0")
    assert not _grouped("k_grouped", *short, **bf16)["tma_store"]


def test_tune_c_prefetch(monkeypatch):
    """Step 13: k-grouped GEMMs with C pull each tile's C block into L2 at its last K block (1 from the end); dense
    GEMMs with C do not unless DG_TUNE_C_PREFETCH=D asks; never without C or where C's rows are not 16-byte strides
    (a tensor map's rule); 0 turns it off."""
    f32_c = {"b_scale_per_row": True, "out_f32": True, "c_kind": 2}
    assert _grouped("k_grouped", 4096, 7168, 4 * 8192, 4, **f32_c)["c_prefetch"] == 1
    assert _grouped("k_grouped", 4096, 7168, 4 * 8192, 4, b_scale_per_row=True, out_f32=True)["c_prefetch"] == 0
    assert _C.select_fp8_gemm_config(4096, 7168, 2048, 132, c_kind=1)["c_prefetch"] == 0
    assert _grouped("contiguous", 4 * 8192, 4096, 7168, 4)["c_prefetch"] == 0
    monkeypatch.setenv("DG_TUNE_C_PREFETCH", "3")
    assert _C.select_fp8_gemm_config(4096, 7168, 2048, 132, c_kind=1)["c_prefetch"] == 3
    assert _C.select_fp8_gemm_config(4096, 7168, 2048, 132, out_f32=True, c_kind=2)["c_prefetch"] == 3
    assert _C.select_fp8_gemm_config(4096, 7164, 2048, 132, c_kind=1)["c_prefetch"] == 0  # 14 336-byte rows
    assert _C.select_fp8_gemm_config(4096, 7164, 2048, 132, out_f32=True, c_kind=2)["c_prefetch"] == 3
    assert _C.select_fp8_gemm_config(4096, 7168, 2048, 132)["c_prefetch"] == 0  # no C
    monkeypatch.setenv("DG_TUNE_C_PREFETCH", "0")
    assert _grouped("k_grouped", 4096, 7168, 4 * 8192, 4, **f32_c)["c_prefetch"] == 0
    monkeypatch.setenv("DG_TUNE_C_PREFETCH", "-1")
    with pytest.raises(ValueError, match="DG_TUNE_C_PREFETCH must be a non-negative integer"):
        _C.select_fp8_gemm_config(4096, 7168, 2048, 132, c_kind=1)


def test_tune_dynamic_tiles(monkeypatch):
    """Step 18: contiguous, ragged and k-grouped GEMMs hand out their tiles from a device counter; masked and dense
    ones keep the static order; never with the tail split or split K; DG_TUNE_DYNAMIC_TILES=1 / 0 forces it where it
    can run / turns it off."""
    wgrad = {"b_scale_per_row": True, "out_f32": True, "c_kind": 2}
    assert _grouped("ragged", 16384, 4096, 7168, 16)["dynamic_tiles"]
    assert _grouped("ragged", 32 * 128, 4096, 7168, 32)["dynamic_tiles"]  # 128-row tiles, no clusters
    assert _grouped("k_grouped", 4096, 7168, 4 * 8192, 4, **wgrad)["dynamic_tiles"]
    assert _grouped("contiguous", 4 * 8192, 4096, 7168, 4)["dynamic_tiles"]  # 256-row tiles walking segments
    assert _grouped("contiguous", 32 * 512, 7168, 2048, 32)["dynamic_tiles"]
    assert not _grouped("masked", 1024, 4096, 7168, 4, expected_m=1024)["dynamic_tiles"]
    assert not _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["dynamic_tiles"]
    monkeypatch.setenv("DG_TUNE_DYNAMIC_TILES", "1")
    assert _grouped("masked", 1024, 4096, 2048, 4, expected_m=1024)["dynamic_tiles"]  # (no tail split at K = 2048)
    assert _C.select_fp8_gemm_config(4096, 7168, 16384, 132)["dynamic_tiles"]
    c = _C.select_fp8_gemm_config(64, 2112, 7168, 132)  # split K: no counter
    assert c["split_k"] > 1 and not c["dynamic_tiles"], c
    c = _grouped("masked", 4096, 4096, 7168, 1, expected_m=1228)  # the tail split (step 10): no counter
    assert c["tail_split"] and not c["dynamic_tiles"], c
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "1")  # forced on contiguous GEMMs too: no counter there either
    c = _grouped("contiguous", 4 * 2048, 4096, 2048, 4)
    assert c["tail_split"] and not c["dynamic_tiles"], c
    monkeypatch.delenv("DG_TUNE_TAIL_SPLIT")
    monkeypatch.setenv("DG_TUNE_DYNAMIC_TILES", "0")
    assert not _grouped("ragged", 16384, 4096, 7168, 16)["dynamic_tiles"]
    assert not _grouped("contiguous", 4 * 8192, 4096, 7168, 4)["dynamic_tiles"]
    assert not _grouped("k_grouped", 4096, 7168, 4 * 8192, 4, **wgrad)["dynamic_tiles"]


@needs_nvrtc
@pytest.mark.parametrize("variant,forced", [
    (dict(m=4096, n=7168, k=4 * 8192, grouping="k_grouped", num_groups=4, out_f32=True, c_kind=2,
          b_scale_per_row=True), None),
    (dict(m=100, n=296, k=272, c_kind=1), "2")], ids=["k_grouped", "dense_bf16_c"])
def test_real_kernel_compiles_with_c_prefetch(variant, forced, monkeypatch):
    _C.configure(str(CUDA_DIR), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "1")
    if forced:
        monkeypatch.setenv("DG_TUNE_C_PREFETCH", forced)
    r = _C.compile_fp8_gemm(**{**PROBLEM, **variant})
    d = r["config"]["c_prefetch"]
    assert d == int(forced or 1) and f"#define JDG_C_PREFETCH {d}" in r["source"] and r["kernel"].endswith(f"_cpf{d}")
    assert r["cubin_size"] > 0


@pytest.mark.parametrize("grouping", ["masked", "k_grouped"])
def test_masked_and_k_grouped_tile_limits(grouping, monkeypatch):
    # Step 6 of the model: masked tiles up to 128 x 128 but 256 x 128 for groups expected to fill two 256-row tiles
    # over K the tail split takes, k-grouped 128-row ones up to 128 wide or 256 x 128 (each measured faster than the
    # wider / taller picks the cost alone would make).
    kwargs = dict(grouping="k_grouped", out_f32=True, c_kind=2, b_scale_per_row=True) if grouping == "k_grouped" \
        else dict(grouping="masked")
    for g, m, n in [(4, 4096, 7168), (8, 7168, 2048), (2, 200, 300), (1, 4096, 4096)]:
        extra = dict(expected_m=m) if grouping == "masked" else {}
        c = _C.select_fp8_gemm_config(m, n, g * 4096, 132, num_groups=g, **kwargs, **extra)
        assert c["block_n"] <= 128, (g, m, n, c)
        if grouping == "masked":  # K = g x 4096 >= 4096 here: expected_m decides
            if m >= 512:
                assert (c["block_m"], c["block_n"]) == (256, 128), (g, m, n, c)
            else:
                assert c["block_m"] <= 128, (g, m, n, c)
        elif m >= 4096:  # many M blocks: the taller tile's fewer waves win (measured on every benchmark shape)
            assert c["block_m"] == 256, (g, m, n, c)
    if grouping == "masked":
        def tall(k, expected_m=1024):
            return _C.select_fp8_gemm_config(4096, 4096, k, 132, num_groups=1, expected_m=expected_m, **kwargs)
        assert (tall(4096)["block_m"], tall(4096)["tail_split"]) == (256, True)
        assert tall(2048)["block_m"] == 128  # 16 K blocks: no tail split
        assert tall(4096, expected_m=511)["block_m"] == 128
        narrow = _C.select_fp8_gemm_config(4096, 64, 4096, 132, num_groups=1, expected_m=1024, **kwargs)
        assert narrow["block_m"] <= 128, narrow  # N < 128: a 128-wide tile would be half empty
        monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "0")  # 256 x 128 without it measured slower
        assert tall(4096)["block_m"] == 128
        monkeypatch.delenv("DG_TUNE_TAIL_SPLIT")
        monkeypatch.setenv("DG_TUNE_CLUSTER", "2")  # forced clusters exclude the tail split: no 256 x 128 either
        assert tall(4096)["block_m"] == 128
        monkeypatch.delenv("DG_TUNE_CLUSTER")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "176")  # forcing may still take any width the kernel supports
    assert _C.select_fp8_gemm_config(4096, 7168, 4 * 4096, 132, num_groups=4, **kwargs)["block_n"] == 176
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "256")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "128")
    assert _C.select_fp8_gemm_config(4096, 7168, 4 * 4096, 132, num_groups=4, **kwargs)["block_m"] == 256


def test_masked_mid_groups_take_192_wide_tiles(monkeypatch):
    """Step 20: masked groups of 129-511 expected rows over the tail split's K at N >= 4096 take 128 x 192 (measured
    faster in benchmarks/NOTES.md 152); N = 2048, K = 2048, rows crossing sectors and 512 rows keep their tiles."""
    def pick(g, expected_m, n, k):
        c = _C.select_fp8_gemm_config(4096, n, k, 132, grouping="masked", num_groups=g, expected_m=expected_m)
        return c["block_m"], c["block_n"], c["tail_split"]
    for g, expected_m, n, k in [(4, 307, 4096, 7168), (8, 384, 7168, 4096), (6, 360, 5120, 5120), (8, 153, 4096, 7168),
                                (32, 129, 4096, 4096), (4, 511, 4096, 7168)]:
        assert pick(g, expected_m, n, k) == (128, 192, True), (g, expected_m, n, k)
    assert pick(4, 128, 4096, 7168)[1] <= 128  # one 128-row tile per group: step 6
    assert pick(4, 512, 4096, 7168) == (256, 128, True)  # step 6's tall groups
    assert pick(16, 230, 2048, 7168)[:2] == (128, 128)  # N = 2048: measured slower
    assert pick(4, 307, 4096, 2048) == (128, 128, False)  # no tail split at K = 2048
    assert pick(4, 307, 4096, 6000)[:2] == (128, 128)  # rows crossing sectors: clusters, unmeasured with 192
    # per-row B scales (tiles at most 176 wide): step 6's search (step 20 once picked 192 there, and threw)
    c = _C.select_fp8_gemm_config(4096, 4096, 7168, 132, grouping="masked", num_groups=4, expected_m=307,
                                  b_scale_per_row=True, out_f32=True)
    assert c["block_m"] == 128 and c["block_n"] <= 128, c
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "0")
    assert pick(4, 307, 4096, 7168)[:2] == (128, 128)
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "1")
    assert pick(4, 307, 4096, 7168) == (128, 192, True)
    monkeypatch.delenv("DG_TUNE_TAIL_SPLIT")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "128")  # a forced width wins
    assert pick(4, 307, 4096, 7168)[:2] == (128, 128)
    monkeypatch.delenv("DG_TUNE_BLOCK_N")
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "256")
    assert pick(4, 307, 4096, 7168)[:2] == (256, 128)


def _config_fuzz():
    spec = importlib.util.spec_from_file_location("jdg_config_fuzz", REPO / "tools" / "config_fuzz.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _step_bound_problems():
    """Problems over the knobs the callers pass (no DG_TUNE_*): every grouping, both B scale kinds, FP32 out with
    and without C, and shapes through each step's bounds (group rows around 64 / 128 / 512 / 768, N under and over
    4096, K short, at the tail split's bound, long, and rows crossing sectors), on several SM counts."""
    shapes = [(1, 16, 16), (64, 2112, 7168), (200, 4096, 7168), (307, 4096, 5120), (384, 4096, 7168),
              (600, 7168, 4096), (1024, 4096, 7168), (4096, 2048, 2048), (879, 4608, 9728), (4096, 7168, 6000)]
    for grouping in ("dense", "contiguous", "ragged", "masked", "k_grouped"):
        for per_row in ((True,) if grouping == "k_grouped" else (False, True)):
            for out_f32, c_kind in ((False, 0), (True, 0), (True, 2)):
                if c_kind and grouping in ("contiguous", "ragged", "masked"):
                    continue  # (C is dense and k-grouped only)
                for m, n, k in shapes:
                    for num_sms in (132, 114, 7):
                        kw = dict(b_scale_per_row=per_row, out_f32=out_f32, c_kind=c_kind, hbm_gbs=4814)
                        if grouping != "dense":
                            kw.update(grouping=grouping, num_groups=4, expected_m=m if grouping == "masked" else 0)
                        yield m, n, k, num_sms, kw


def test_every_selection_finds_a_config_that_fits():
    """No rule of the model may pick a tile the kernel cannot take (step 20 once gave per-row B scales 192 columns,
    and threw): each problem, at each step's bounds and 20000 random ones (tools/config_fuzz.py), all of them
    problems the API accepts, gets a configuration that exists and fits; none is refused."""
    fuzz = _config_fuzz()
    bad = []
    for problem in list(_step_bound_problems()) + list(fuzz.problems(seed=0, count=20000)):
        if found := fuzz.selection_problems(_C, *problem):
            bad.append((problem, found))
    assert not bad, bad[:5]


def test_masked_counts_half_a_partial_tile_per_group():
    # expected_m 512 in 2 groups of 4096 rows: 2 x (512 / 128 + 1/2) = 9 M blocks of 128 rows, not 2 x 4 nor 2 x 32
    c = _C.select_fp8_gemm_config(4096, 4096, 2048, 132, grouping="masked", num_groups=2, expected_m=512)
    assert c["block_m"] == 128 and c["tiles"] == 9 * -(-4096 // c["block_n"]), c
    # over K = 7168 (256 x 128 tiles, step 6): 2 x (512 / 256 + 1/2) = 5
    c = _C.select_fp8_gemm_config(4096, 4096, 7168, 132, grouping="masked", num_groups=2, expected_m=512)
    assert c["block_m"] == 256 and c["tiles"] == 5 * 32, c
    # expected_m = M: every group fills all its tiles, nothing is added
    c = _C.select_fp8_gemm_config(256, 4096, 7168, 132, grouping="masked", num_groups=2, expected_m=256)
    assert c["tiles"] == 2 * (256 // c["block_m"]) * -(-4096 // c["block_n"]), c


@needs_real_kernel
@needs_nvcc
@pytest.mark.parametrize("variant", REAL_VARIANTS[:3], ids=["base", "small_m", "large"])
def test_real_kernel_compiles_nvcc(variant, monkeypatch):
    _C.configure(str(CUDA_DIR), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "0")
    r = _C.compile_fp8_gemm(**{**PROBLEM, **variant})
    assert r["cache"] == "compiled" and r["compiler"].startswith("NVCC")


# ---------------------------------------------------------------------------------------------------------------
# The FFI handler's attribute contract, checked on the CPU backend: the instantiate stage decodes the attributes and
# compiles; execute then fails for want of a GPU stream.


def ffi_program(include_dir) -> str:
    """A JAX program that registers the handler for the CPU platform and runs one jdg_fp8_gemm call: instantiate
    decodes the attributes and compiles; execute then fails for want of a GPU stream. Prints "ERROR: <message>"
    for the exception the call raised, then "ALIVE" (the process survived it)."""
    return textwrap.dedent(f"""
        import jax, jax.numpy as jnp
        from jax_deepgemm import _C
        jax.devices()  # the CPU client must exist before types, then targets, are registered
        _C.configure({str(include_dir)!r}, {nvrtc_candidates()!r})
        for name, t in _C.state_types().items():
            jax.ffi.register_ffi_type(name, t, platform="cpu")
        for name, bundle in _C.registrations().items():
            jax.ffi.register_ffi_target(name, bundle, platform="cpu", api_version=1)
        M, N, K = 200, 384, 256
        args = (jnp.zeros((M, K), jnp.float8_e4m3fn), jnp.ones((2, M), jnp.float32),
                jnp.zeros((N, K), jnp.float8_e5m2), jnp.ones((2, N), jnp.float32), jnp.zeros((M, N), jnp.float32))
        call = jax.ffi.ffi_call("jdg_fp8_gemm", jax.ShapeDtypeStruct((M, N), jnp.float32))
        f = jax.jit(lambda *a: call(*a, m=M, n=N, k=K, num_sms=132, c_kind=2, arch="sm_90a", a_e5m2=False,
                                    b_e5m2=True, b_scale_per_row=True, out_f32=True))
        try:
            f(*args).block_until_ready()
        except Exception as e:
            print("ERROR:", type(e).__name__, e)
        print("ALIVE", float(jnp.sum(jnp.ones(3))))
    """)


def run_ffi_program(include_dir, tmp_path, **env):
    proc = subprocess.run([sys.executable, "-c", ffi_program(include_dir)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path, env=clean_env(DG_JIT_CACHE_DIR=str(tmp_path / "jit_cache"),
                                                                 JAX_PLATFORMS="cpu", **env))
    assert proc.returncode == 0, proc.stderr
    assert "ALIVE 3.0" in proc.stdout, proc.stdout
    return proc


@needs_compiler
def test_ffi_instantiate_decodes_attributes(stub_dir, tmp_path):
    proc = run_ffi_program(stub_dir, tmp_path, DG_JIT_DEBUG="1")
    # Instantiate ran with the attributes above and compiled the kernel they describe ...
    assert "jdg_fp8_gemm_n384_k256_" in proc.stderr and "_e4m3_e5m2_sr_f32_c2" in proc.stderr, proc.stderr
    assert "compiled with" in proc.stderr
    # ... and execute got as far as asking for the GPU stream.
    assert "ERROR:" in proc.stdout and "stream" in proc.stdout, proc.stdout


def test_ffi_compile_error_becomes_a_python_exception(stub_dir, tmp_path):
    """A compiler failing inside XLA's compilation of a program (the handler's instantiate stage) surfaces as a
    Python exception naming the kernel and holding the compiler's log; the process carries on."""
    nvcc = fake_nvcc(tmp_path, 'echo "fake-nvcc: error: no space left for FP8" >&2; exit 1')
    proc = run_ffi_program(stub_dir, tmp_path, DG_JIT_USE_NVRTC="0", DG_JIT_NVCC_COMPILER=nvcc)
    (error,) = [line for line in proc.stdout.splitlines() if line.startswith("ERROR:")]
    assert "compiling kernel jdg_fp8_gemm_n384_k256_" in error, proc.stdout
    assert "fake-nvcc: error: no space left for FP8" in proc.stdout, proc.stdout


def test_tune_tail_split(monkeypatch):
    """Step 10: masked GEMMs over long K split a short last round by default; DG_TUNE_TAIL_SPLIT=1 forces it wherever
    the configuration allows it (pairs of CTAs: an even grid, up to two per tile), 0 turns it off."""
    masked = lambda k: _grouped("masked", 4096, 4096, k, 1, expected_m=1228)  # noqa: E731
    c = masked(7168)
    assert (c["block_m"], c["block_n"], c["tail_split"], c["cluster"], c["grid"]) == (256, 128, True, 1, 132), c
    assert not masked(2048)["tail_split"]  # 16 K blocks: the whole tiles' cost is not amortized
    assert not _C.select_fp8_gemm_config(4096, 4096, 7168, 132)["tail_split"]  # dense: only forced
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "0")
    assert not masked(7168)["tail_split"]
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "1")
    assert masked(2048)["tail_split"]
    c = _C.select_fp8_gemm_config(300, 384, 1024, 8)
    assert (c["tail_split"], c["grid"]) == (True, 8), c
    c = _C.select_fp8_gemm_config(100, 130, 1000, 131)  # a lone round: a pair of CTAs for every tile
    assert c["tail_split"] and c["grid"] == 2 * c["tiles"] < 131, c
    assert not _C.select_fp8_gemm_config(300, 384, 128, 8)["tail_split"]  # one K block: nothing to split
    assert not _C.select_fp8_gemm_config(4096, 2112, 7008, 132)["tail_split"]  # multicast clusters (step 5)
    assert not _C.select_fp8_gemm_config(64, 2112, 7168, 132)["tail_split"]  # split K (step 9)
    assert not _grouped("ragged", 4 * 8192, 4096, 7168, 4)["tail_split"]  # its tiles are not counted on the device
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "2")
    with pytest.raises(ValueError, match="DG_TUNE_TAIL_SPLIT=2 is not 0 or 1"):
        masked(7168)
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "on")
    with pytest.raises(ValueError, match="DG_TUNE_TAIL_SPLIT must be a non-negative integer"):
        masked(7168)


def test_tune_segments(monkeypatch):
    """Step 11: contiguous 256-row tiles walk expert segments over K >= 4096 by default (the grid then bounded by one
    tile per 128-row block); DG_TUNE_SEGMENTS=1 forces the walk wherever it applies, 0 keeps the fixed grid, and a
    forced tail split (which counts the fixed grid's tiles) excludes it."""
    def contiguous(m, k, sms=132):
        return _C.select_fp8_gemm_config(m, 512, k, sms, grouping="contiguous", num_groups=2)

    c = contiguous(4 * 8192, 7168)
    assert (c["block_m"], c["segments"], c["tail_split"]) == (256, True, False), c
    assert contiguous(4 * 8192, 4096)["segments"]
    assert not contiguous(4 * 8192, 2048)["segments"]  # 16 K blocks: the walk's own cost is not amortized
    assert (contiguous(8192, 7168)["grid"], contiguous(8192, 2048)["grid"]) == (132, 128)  # bounds 64 / 32 x 4 tiles
    assert contiguous(2 * 128, 7168)["block_m"] == 128 and not contiguous(2 * 128, 7168)["segments"]  # short runs
    assert not _grouped("ragged", 4 * 8192, 4096, 7168, 4)["segments"]  # ragged tiles walk groups anyway
    assert not _grouped("masked", 4096, 4096, 7168, 2, expected_m=2048)["segments"]
    assert not _C.select_fp8_gemm_config(4096, 4096, 7168, 132)["segments"]
    monkeypatch.setenv("DG_TUNE_SEGMENTS", "1")
    assert contiguous(4 * 8192, 2048)["segments"]
    assert not contiguous(2 * 128, 7168)["segments"]  # 128-row tiles: no 256-row tile to straddle experts
    monkeypatch.setenv("DG_TUNE_TAIL_SPLIT", "1")
    monkeypatch.setenv("DG_TUNE_CLUSTER", "1")  # (the tail split takes no multicast)
    c = contiguous(4 * 8192, 7168)
    assert (c["segments"], c["tail_split"]) == (False, True), c
    monkeypatch.delenv("DG_TUNE_TAIL_SPLIT")
    assert contiguous(4 * 8192, 7168)["segments"]
    monkeypatch.setenv("DG_TUNE_SEGMENTS", "0")
    assert not contiguous(4 * 8192, 7168)["segments"]


def test_short_ragged_groups_take_128_row_tiles(monkeypatch):
    """Step 16: ragged groups of fewer than 384 rows (M / G) over K >= 2048 take 128-row tiles, whose last tile per
    group wastes half as many rows where group sizes vary (H200, NOTES 94: 256 x 128 lost 0.7-16% on skewed draws);
    M / G a multiple of 256 used to fill 256-row tiles in the count. Their cost takes its waves unrounded: 64 groups
    of 128 rows at N = 2048 rounded 7.8 waves of 128 x 128 and 5.3 of 128 x 192 to a tie, which 128 x 128 won; 128 x
    192 ran up to 6% faster."""
    for g, rows, n, k in [(16, 256, 2048, 4096), (16, 256, 5760, 2880), (128, 256, 1536, 2048), (32, 192, 4096, 7168),
                          (32, 130, 7168, 2048), (64, 128, 2880, 2880), (64, 128, 2048, 4096)]:
        c = _grouped("ragged", g * rows, n, k, g)
        assert (c["block_m"], c["block_n"]) == (128, 192), (g, rows, n, k, c)
    # shorter K takes 128-row tiles by step 19 (groups just over 128 rows, whose cost alone picks 256 x 128) ...
    assert _grouped("ragged", 32 * 129, 4096, 1536, 32)["block_m"] == 128
    # ... with unrounded waves there too (4096 rows over 32 groups: 128 x 192, not 128 x 128)
    assert _grouped("ragged", 32 * 128, 4096, 1536, 32)["block_n"] == 192
    # contiguous groups of those sizes keep rounded waves (their count, of padded 128-row blocks, is exact): 128 x 128
    c = _grouped("contiguous", 16 * 256, 2048, 4096, 16)
    assert (c["block_m"], c["block_n"]) == (128, 128), c
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "256")  # a forced BLOCK_M still wins
    assert _grouped("ragged", 16 * 256, 2048, 4096, 16)["block_m"] == 256


def test_ragged_groups_under_768_rows_over_short_k_take_128_row_tiles(monkeypatch):
    """Step 19: ragged groups of fewer than 768 rows (M / G) over K < 6144 take 128-row tiles, where step 12 (from 384
    rows over K >= 2048) or the cost (K < 2048) took 256 x 128: a group's partial last tile wastes twice the rows at
    256, and over short K the faster 256-row loop does not win it back (H200, NOTES 150: 128 x 192 -0.4% to -9.2% on
    every ~512-row group at K = 2048-5120, held out -2.3% geometric mean over 16 rows). Rows as the host sees them
    (M / G) in the measured runs."""
    moved = [(16, 512, 3072, 4096), (32, 512, 7168, 2048), (16, 448, 2560, 2560), (32, 512, 1536, 2048),
             (16, 400, 6144, 4608), (8, 740, 7168, 2048), (12, 704, 2048, 5120), (16, 256, 4096, 1024),
             (128, 256, 2048, 768), (32, 384, 3072, 1792)]
    for g, rows, n, k in moved:
        c = _grouped("ragged", g * rows, n, k, g)
        assert (c["block_m"], c["block_n"]) == (128, 192), (g, rows, n, k, c)
    # from 768 rows, and over K >= 6144 from 384, step 12's 256 x 128 stays (1024 rows: 128-row tiles -1.4% to +7.2%;
    # 512 rows at K = 7168: +2.2%); contiguous groups keep their own bound (output over 4 Mi elements)
    for grouping, g, rows, n, k in [("ragged", 16, 768, 3072, 4096), ("ragged", 16, 800, 3072, 4096),
                                    ("ragged", 32, 512, 4096, 7168), ("ragged", 8, 2048, 28672, 4096),
                                    ("contiguous", 12, 640, 7168, 4096)]:
        c = _grouped(grouping, g * rows, n, k, g)
        assert (c["block_m"], c["block_n"]) == (256, 128), (grouping, g, rows, n, k, c)
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "256")  # a forced BLOCK_M still wins
    assert _grouped("ragged", 16 * 512, 3072, 4096, 16)["block_m"] == 256


def test_mid_size_groups_take_256_row_tiles(monkeypatch):
    """Step 12: contiguous groups of >= 384 rows over K >= 4096 (where their tiles walk segments; below K = 6144 only
    for outputs over 4 Mi elements per group, NOTES 87) and ragged ones over K >= 2048 (below K = 6144 only from 768
    rows, step 19) take 256-row tiles, which
    measured up to 17% faster than the 128 x 192 / 160 / 128 ones the cost alone picks there (benchmarks/NOTES.md 66,
    67); shorter groups and shorter K keep the cost's choice, and a forced BLOCK_M still wins. Rows per group as the
    host sees them (M / G) in the measured runs."""
    measured = [(8, 1024, 7168, 7168), (8, 512, 7168, 7168), (16, 512, 4096, 7168), (4, 1024, 7168, 4096),
                (16, 448, 7168, 7168)]
    for grouping in ("contiguous", "ragged"):
        for g, rows, n, k in measured:
            c = _grouped(grouping, g * rows, n, k, g)
            assert (c["block_m"], c["block_n"]) == (256, 128), (grouping, g, rows, n, k, c)
    for grouping, g, rows, n, k in [("contiguous", 24, 384, 4096, 7168), ("ragged", 8, 1127, 4096, 2048),
                                    ("ragged", 16, 1024, 4096, 4096), ("ragged", 12, 896, 5120, 2048)]:
        c = _grouped(grouping, g * rows, n, k, g)
        assert (c["block_m"], c["block_n"]) == (256, 128), (grouping, g, rows, n, k, c)
    # the cost's picks where step 12 does not apply: shorter groups; contiguous K = 2048 (no segment walk there)
    assert _grouped("contiguous", 32 * 288, 7168, 7168, 32)["block_m"] == 128
    assert _grouped("contiguous", 16 * 336, 4096, 7168, 16)["block_m"] == 128
    assert _grouped("ragged", 32 * 261, 7168, 7168, 32)["block_m"] == 128
    assert _grouped("ragged", 24 * 318, 7168, 4096, 24)["block_m"] == 128
    assert _grouped("contiguous", 8 * 512, 7168, 2048, 8)["block_m"] == 128
    assert _grouped("contiguous", 8 * 608, 7168, 2048, 8)["block_m"] == 128
    assert _grouped("masked", 8 * 4096, 7168, 2048, 8, expected_m=384)["block_m"] == 128  # masked: step 6 decides
    # contiguous groups over K < 6144 whose output (M / G x N) is at most 4 Mi elements keep the cost's 128-row tiles
    # (NOTES 87: 2-16% faster on an H200), larger ones and longer K take step 12's 256 x 128
    for g, rows, n, k in [(16, 576, 3072, 4096), (8, 1088, 3072, 4096), (16, 576, 6144, 4096), (32, 448, 7168, 5120)]:
        c = _grouped("contiguous", g * rows, n, k, g)
        assert (c["block_m"], c["block_n"]) == (128, 192), (g, rows, n, k, c)
    for g, rows, n, k in [(12, 1088, 4096, 4096), (16, 576, 3072, 6144), (8, 2112, 28672, 4096)]:
        assert _grouped("contiguous", g * rows, n, k, g)["block_m"] == 256, (g, rows, n, k)
    # where the cost's 256-row pick is narrower than 128 (one 1024-row group, N = 2048): 128-row tiles, as before
    assert _grouped("ragged", 1024, 2048, 2048, 1)["block_m"] == 128
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "192")  # a forced width over 128 takes 128-row tiles, as before step 12
    assert (_grouped("ragged", 8 * 1024, 7168, 7168, 8)["block_m"], _grouped("ragged", 8 * 1024, 7168, 7168, 8)[
        "block_n"]) == (128, 192)
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "64")  # a narrower one keeps step 12's rows
    assert _grouped("ragged", 8 * 1024, 7168, 7168, 8)["block_m"] == 256
    monkeypatch.delenv("DG_TUNE_BLOCK_N")
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "128")
    assert _grouped("contiguous", 8 * 1024, 7168, 7168, 8)["block_m"] == 128
