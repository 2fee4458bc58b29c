"""The CUDA lowering of the M-grouped GEMMs, checked without a GPU: programs lowered for "cuda" hold one jdg_fp8_gemm
custom call with the grouped layout as attributes (and the group data as its fifth operand), and no XLA dot; the
kernels those attributes select compile for sm_90a (NVRTC), and the FFI handler rejects impossible problems."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
from jax_deepgemm import runtime


def _lower_cuda(fn, *args) -> str:
    return jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",)).as_text()


def _attributes(text: str) -> dict:
    calls = re.findall(r"stablehlo\.custom_call @jdg_fp8_gemm\((.*)", text)
    assert len(calls) == 1, text
    config = re.search(r"mhlo\.backend_config = \{(.*?)\}", calls[0]).group(1)
    return dict(item.strip().split(" = ", 1) for item in config.split(","))


def _operand_types(text: str) -> str:
    call = re.search(r"stablehlo\.custom_call @jdg_fp8_gemm\(.*", text).group(0)
    return "(" + call.rsplit(" : (", 1)[1]  # "(tensor<...>, ...) -> tensor<...>"


def _lhs(m, k, lead=()):
    x = jax.random.normal(jax.random.key(0), lead + (m, k))
    return jax.vmap(dg.per_token_cast_to_fp8)(x) if lead else dg.per_token_cast_to_fp8(x)


def _rhs(g, n, k, per_row=False, dtype=jnp.float8_e4m3fn):
    w = jax.random.normal(jax.random.key(1), (g, n, k))
    data, scale = jax.vmap(dg.per_token_cast_to_fp8 if per_row else dg.per_block_cast_to_fp8)(w)
    return data.astype(dtype), scale


@pytest.mark.parametrize("m,n,k,g", [(512, 130, 200, 4), (8192, 4096, 7168, 8), (1, 16, 16, 1)])
def test_contiguous_lowers_to_the_ffi_call(m, n, k, g):
    a, b = _lhs(m, k), _rhs(g, n, k)
    ids = jnp.zeros((m,), jnp.int32)
    text = _lower_cuda(lambda a, b, i: dg.m_grouped_fp8_gemm_nt_contiguous(a, b, i), a, b, ids)
    assert "dot_general" not in text
    attrs = _attributes(text)
    assert attrs["grouping"] == '"contiguous"' and attrs["num_groups"] == f"{g} : i64"
    assert attrs["m"] == f"{m} : i64" and attrs["n"] == f"{n} : i64" and attrs["k"] == f"{-(-k // 16) * 16} : i64"
    assert attrs["c_kind"] == "0 : i64" and attrs["b_scale_per_row"] == "false"
    kp, kb, nb, m4 = -(-k // 16) * 16, -(-k // 128), -(-n // 128), -(-m // 4) * 4
    types = _operand_types(text)
    # a [M, K], a_scale [kb, M4] (M padded to 4), b [G*N, K], b_scale [G*nb, kb], m_indices [M] -> d [M, N]
    assert types.startswith(f"(tensor<{m}x{kp}xf8E4M3FN>, tensor<{kb}x{m4}xf32>, tensor<{g * n}x{kp}xf8E4M3FN>, "
                            f"tensor<{g * nb}x{kb}xf32>, tensor<{m}xi32>) -> tensor<{m}x{n}xbf16>"), types


def test_ragged_lowers_to_the_ffi_call_with_per_row_scales():
    m, n, k, g = 300, 384, 256, 5
    a, b = _lhs(m, k), _rhs(g, n, k, per_row=True, dtype=jnp.float8_e5m2)
    sizes = jnp.asarray([100, 0, 50, 120, 30], jnp.int32)
    fn = lambda a, b, s: dg.fp8_grouped_gemm_nt(a, b, s, out_dtype=jnp.float32)
    text = _lower_cuda(fn, a, b, sizes)
    assert "dot_general" not in text
    attrs = _attributes(text)
    assert attrs["grouping"] == '"ragged"' and attrs["num_groups"] == "5 : i64"
    assert attrs["b_scale_per_row"] == "true" and attrs["b_e5m2"] == "true" and attrs["out_f32"] == "true"
    types = _operand_types(text)
    assert f"tensor<{g * 2}x{n}xf32>, tensor<{g}xi32>) -> tensor<{m}x{n}xf32>" in types, types


@pytest.mark.parametrize("expected_m", [1, 256, 4096, 2**70])
def test_masked_lowers_to_the_ffi_call(expected_m):
    g, m, n, k = 4, 1024, 4096, 7168
    a, b = _lhs(m, k, lead=(g,)), _rhs(g, n, k)
    masked_m = jnp.full((g,), 300, jnp.int32)
    text = _lower_cuda(lambda a, b, mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, expected_m), a, b, masked_m)
    assert "dot_general" not in text
    attrs = _attributes(text)
    assert attrs["grouping"] == '"masked"' and attrs["expected_m"] == f"{min(expected_m, m)} : i64"  # hint <= M
    assert attrs["m"] == f"{m} : i64" and attrs["num_groups"] == f"{g} : i64"
    types = _operand_types(text)
    # a flattened to [G*M, K], its scales to [kb, G*M]; d comes back as [G*M, N] and is reshaped to [G, M, N]
    assert types.startswith(f"(tensor<{g * m}x{k}xf8E4M3FN>, tensor<{k // 128}x{g * m}xf32>"), types
    assert types.endswith(f"-> tensor<{g * m}x{n}xbf16>"), types
    assert f"tensor<{g}x{m}x{n}xbf16>" in text


def test_grouped_under_scan_and_grad_use_the_kernel():
    """ragged_dot's forward and its dgrad run the ragged kernel (the wgrad is k-grouped: no kernel yet)."""
    m, k, n, g = 256, 512, 384, 4
    lhs = jax.random.normal(jax.random.key(0), (m, k), jnp.bfloat16)
    rhs = jax.random.normal(jax.random.key(1), (g, k, n), jnp.bfloat16)
    sizes = jnp.asarray([64, 100, 0, 92], jnp.int32)
    loss = lambda x, w: jnp.square(dg.ragged_dot(x, w, sizes).astype(jnp.float32)).sum()
    text = _lower_cuda(jax.grad(loss, argnums=0), lhs, rhs)
    assert text.count('grouping = "ragged"') == 2, text.count('grouping = "ragged"')


def test_disable_kernels_falls_back_to_the_reference(monkeypatch):
    monkeypatch.setenv("JAX_DEEPGEMM_DISABLE_KERNELS", "1")
    a, b = _lhs(128, 128), _rhs(2, 64, 128)
    text = _lower_cuda(lambda a, b, s: dg.fp8_grouped_gemm_nt(a, b, s), a, b, jnp.asarray([64, 64], jnp.int32))
    assert "jdg_fp8_gemm" not in text and "dot_general" in text


# ---------------------------------------------------------------------------------------------------------------
# The extension: configurations and compiles of the grouped kernels (no GPU needed).

_ext = runtime.extension()
needs_ext = pytest.mark.skipif(_ext is None, reason=f"extension unavailable: {runtime.extension_error()}")


@needs_ext
@pytest.mark.parametrize("grouping", ["contiguous", "ragged", "masked"])
def test_grouped_configs_respect_static_bounds(grouping):
    for m, n, k, g, expected in [(8192, 4096, 7168, 8, 1024), (300, 130, 200, 300, 1), (1, 16, 16, 1, 1),
                                 (4096, 7168, 2048, 4, 256)]:
        c = _ext.select_fp8_gemm_config(m, n, k, 132, grouping=grouping, num_groups=g, expected_m=expected)
        m_blocks = -(-m // c["block_m"])
        bound = {"contiguous": m_blocks, "ragged": m_blocks + g, "masked": g * m_blocks}[grouping]
        assert 1 <= c["grid"] <= min(132, bound * -(-n // c["block_n"]))
        assert c["block_m"] in (64, 128, 256) and c["block_n"] % 16 == 0
    # small groups pick 64-row tiles
    assert _ext.select_fp8_gemm_config(4096, 4096, 7168, 132, grouping="masked", num_groups=4,
                                       expected_m=32)["block_m"] == 64
    assert _ext.select_fp8_gemm_config(256, 4096, 7168, 132, grouping="ragged", num_groups=64)["block_m"] == 64


@needs_ext
def test_grouped_problem_validation():
    with pytest.raises(ValueError, match="grouping must be"):
        _ext.select_fp8_gemm_config(128, 128, 128, 132, grouping="diagonal")
    with pytest.raises(ValueError, match="takes no C"):
        _ext.compile_fp8_gemm("sm_90a", 128, 128, 128, 132, c_kind=1, grouping="ragged", num_groups=2)
    with pytest.raises(ValueError, match="num_groups \\* n"):
        _ext.compile_fp8_gemm("sm_90a", 128, 2**20, 128, 132, grouping="ragged", num_groups=2**12)
    with pytest.raises(ValueError, match="num_groups \\* m"):
        _ext.compile_fp8_gemm("sm_90a", 2**20, 128, 128, 132, grouping="masked", num_groups=2**12)
    with pytest.raises(ValueError, match="num_groups must be"):
        _ext.compile_fp8_gemm("sm_90a", 128, 128, 128, 132, grouping="masked", num_groups=0)
    with pytest.raises(ValueError, match="per-row B scales, and a float32 output"):
        _ext.compile_fp8_gemm("sm_90a", 128, 128, 128, 132, out_f32=True, grouping="k_grouped", num_groups=2)
    with pytest.raises(ValueError, match="per-row B scales, and a float32 output"):
        _ext.compile_fp8_gemm("sm_90a", 128, 128, 128, 132, b_scale_per_row=True, out_f32=True, c_kind=1,
                              grouping="k_grouped", num_groups=2)
    with pytest.raises(ValueError, match="or a bf16 output without C"):  # C accumulates in float32 only
        _ext.compile_fp8_gemm("sm_90a", 128, 128, 128, 132, b_scale_per_row=True, out_f32=False, c_kind=2,
                              grouping="k_grouped", num_groups=2)
    with pytest.raises(ValueError, match="k % 128"):
        _ext.compile_fp8_gemm("sm_90a", 128, 128, 144, 132, b_scale_per_row=True, out_f32=True,
                              grouping="k_grouped", num_groups=2)
    with pytest.raises(ValueError, match="num_groups \\* m"):
        _ext.compile_fp8_gemm("sm_90a", 2**20, 128, 128, 132, b_scale_per_row=True, out_f32=True,
                              grouping="k_grouped", num_groups=2**12)


def _have_nvrtc():
    return _ext is not None and _ext.runtime_info()["nvrtc"]["available"]


@pytest.mark.skipif(not _have_nvrtc(), reason="libnvrtc not found (pip install nvidia-cuda-nvrtc)")
@pytest.mark.parametrize("grouping,m,n,k,g,options", [
    ("contiguous", 8192, 4096, 7168, 8, {}),
    ("contiguous", 512, 130, 208, 4, {"b_scale_per_row": True, "out_f32": True}),
    ("ragged", 8192, 7168, 2048, 16, {}),
    ("ragged", 300, 384, 256, 300, {"b_e5m2": True, "b_scale_per_row": True}),
    ("masked", 1024, 4096, 7168, 4, {"expected_m": 256}),
    ("masked", 4096, 7168, 2048, 2, {"expected_m": 32, "a_e5m2": True, "out_f32": True}),
    ("k_grouped", 4096, 7168, 32256, 4, {"b_scale_per_row": True, "out_f32": True, "c_kind": 2}),
    ("k_grouped", 100, 130, 384, 3, {"b_scale_per_row": True, "out_f32": True, "b_e5m2": True}),
    ("k_grouped", 100, 130, 384, 3, {"b_scale_per_row": True, "out_f32": False}),
])
def test_grouped_kernels_compile_nvrtc(grouping, m, n, k, g, options, monkeypatch, tmp_path):
    # (problems no other test file compiles, but with an sm_90 GPU as the default device another file's cases may
    # run this very kernel first in the same process, and then the in-memory cache answers whatever the cache
    # directory: its key holds the compiler's identity, so such a kernel was compiled by NVRTC as well)
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "1")
    monkeypatch.setenv("DG_JIT_CACHE_DIR", str(tmp_path))
    r = _ext.compile_fp8_gemm("sm_90a", m, n, k, 132, grouping=grouping, num_groups=g, **options)
    assert r["kernel"].startswith(f"jdg_fp8_gemm_{grouping}_n{n}_k{k}_")
    modes = ["contiguous", "ragged", "masked", "k_grouped"]
    assert f"#define JDG_GROUPED_MODE {modes.index(grouping) + 1}" in r["source"]
    assert r["cache"] in ("compiled", "memory") and r["compiler"].startswith("NVRTC") and r["cubin_size"] > 0
    # Dense kernels keep their names and sources (no grouped macro), so their cache entries stay valid.
    dense = _ext.compile_fp8_gemm("sm_90a", 256, 512, 256, 132)
    assert "GROUPED" not in dense["source"] and not any(x in dense["kernel"] for x in ("contiguous", "ragged",
                                                                                        "masked"))
    np.testing.assert_equal(r["config"]["num_threads"], 128 + 128 * min(r["config"]["block_m"] // 64, 2))


@pytest.mark.parametrize("with_c,out_dtype", [(False, jnp.float32), (True, jnp.float32), (False, jnp.bfloat16)])
def test_k_grouped_lowers_to_the_ffi_call(with_c, out_dtype):
    m, n, k, g = 96, 130, 512, 3
    a = dg.per_token_cast_to_fp8(jax.random.normal(jax.random.key(0), (m, k)))
    b = dg.per_token_cast_to_fp8(jax.random.normal(jax.random.key(1), (n, k)))
    sizes = jnp.asarray([128, 256, 128], jnp.int32)
    c = jnp.ones((g, m, n), jnp.float32) if with_c else None
    text = _lower_cuda(lambda a, b, s, c: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c, out_dtype=out_dtype),
                       a, b, sizes, c)
    assert "dot_general" not in text
    assert not re.search(r"stablehlo\.convert .*xf32>\) -> tensor<[0-9x]*xbf16>", text)  # bf16: the kernel rounds
    attrs = _attributes(text)
    assert attrs["grouping"] == '"k_grouped"' and attrs["num_groups"] == f"{g} : i64"
    f32 = out_dtype == jnp.float32
    assert attrs["b_scale_per_row"] == "true" and attrs["out_f32"] == ("true" if f32 else "false")
    assert attrs["c_kind"] == ("2 : i64" if with_c else "0 : i64")
    kb, n4 = k // 128, -(-n // 4) * 4
    d_type = "f32" if f32 else "bf16"
    # a [M, K], a_scale [kb, M4], b [N, K], b_scale [kb, N4], group_sizes [G] (, c [G*M, N]) -> d [G*M, N]
    expected = (f"(tensor<{m}x{k}xf8E4M3FN>, tensor<{kb}x{m}xf32>, tensor<{n}x{k}xf8E4M3FN>, tensor<{kb}x{n4}xf32>, "
                f"tensor<{g}xi32>" + (f", tensor<{g * m}x{n}xf32>" if with_c else "") +
                f") -> tensor<{g * m}x{n}x{d_type}>")
    assert _operand_types(text).startswith(expected), _operand_types(text)


@needs_ext
def test_tune_block_n_restricts_the_heuristic(monkeypatch):
    default = _ext.select_fp8_gemm_config(4096, 7168, 16384, 132)
    forced = 128 if default["block_n"] != 128 else 160
    monkeypatch.setenv("DG_TUNE_BLOCK_N", str(forced))
    assert _ext.select_fp8_gemm_config(4096, 7168, 16384, 132)["block_n"] == forced
    assert _ext.select_fp8_gemm_config(512, 4096, 7168, 132, grouping="masked", num_groups=4)["block_n"] == forced
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "200")
    with pytest.raises(ValueError, match="DG_TUNE_BLOCK_N=200"):
        _ext.select_fp8_gemm_config(4096, 7168, 16384, 132)
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "")  # set but empty: as if unset
    assert _ext.select_fp8_gemm_config(4096, 7168, 16384, 132) == default


@needs_ext
@pytest.mark.parametrize("knob", ["DG_TUNE_BLOCK_M", "DG_TUNE_BLOCK_N", "DG_TUNE_CLUSTER", "DG_TUNE_SPLIT_K"])
@pytest.mark.parametrize("value", ["wide", "-1", "1.5", "12345"])
def test_tune_knob_that_is_not_a_number_is_refused(knob, value, monkeypatch):
    # A typo must not quietly fall back to the heuristics' choice.
    monkeypatch.setenv(knob, value)
    with pytest.raises(ValueError, match=f"{knob} must be a non-negative integer .*got '{re.escape(value)}'"):
        _ext.select_fp8_gemm_config(4096, 7168, 16384, 132)
    if knob != "DG_TUNE_SPLIT_K":  # split K is for dense GEMMs only: grouped ones never read it
        with pytest.raises(ValueError, match=knob):
            _ext.select_fp8_gemm_config(512, 4096, 7168, 132, grouping="masked", num_groups=4)


@needs_ext
def test_tune_block_m_forces_any_supported_block_m(monkeypatch):
    for forced in (64, 128, 256):
        monkeypatch.setenv("DG_TUNE_BLOCK_M", str(forced))
        assert _ext.select_fp8_gemm_config(4096, 7168, 16384, 132)["block_m"] == forced
        c = _ext.select_fp8_gemm_config(8192, 4096, 7168, 132, grouping="contiguous", num_groups=4)
        assert c["block_m"] == forced
        assert c["num_threads"] == (256 if forced == 64 else 384)
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "96")
    with pytest.raises(ValueError, match="DG_TUNE_BLOCK_M=96"):
        _ext.select_fp8_gemm_config(4096, 7168, 16384, 132)
    monkeypatch.setenv("DG_TUNE_BLOCK_M", "256")
    monkeypatch.setenv("DG_TUNE_BLOCK_N", "160")  # 256-row tiles keep three accumulator sets: 128 columns at most
    with pytest.raises(ValueError, match="DG_TUNE_BLOCK_N=160"):
        _ext.select_fp8_gemm_config(4096, 7168, 16384, 132)


@needs_ext
def test_large_m_picks_256_row_tiles_where_the_model_says():
    c = _ext.select_fp8_gemm_config(4096, 7168, 16384, 132)
    assert (c["block_m"], c["block_n"], c["num_threads"]) == (256, 128, 384)
    assert _ext.select_fp8_gemm_config(128, 7168, 16384, 132)["block_m"] in (64, 128)  # no 256 at M <= 128
    # contiguous: long expert runs take 256-row tiles; short ones 128, as an expert boundary inside a 256-row tile
    # costs it a second pass
    assert _ext.select_fp8_gemm_config(32768, 4096, 7168, 132, grouping="contiguous", num_groups=4)["block_m"] == 256
    assert _ext.select_fp8_gemm_config(32768, 4096, 7168, 132, grouping="contiguous", num_groups=96)["block_m"] == 128
