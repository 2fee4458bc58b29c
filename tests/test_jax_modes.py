"""JAX's global modes change no result. Users turn these on for a whole program (jax_enable_x64 for science codes,
rank promotion 'raise' and strict dtype promotion to catch silent broadcasts and upcasts, debug_nans, a transfer
guard, leak checking); every family, the differentiable ops and the MoE layer must run under each and give the same
arrays, dtypes included, as in the default mode. Under x64, Python scalars and literals are 64-bit, so a reference
that let one promote its arithmetic (or a kernel call that took an int64 operand) would show here; group data given
as int64, as `jnp.array([...])` makes it under x64, is read as its int32-clamped value."""

from __future__ import annotations

import contextlib
import re
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
from conftest import INT32_MAX, kernels_active
from jax_deepgemm import nn

RNG = np.random.default_rng(64)


def _data(*shape, spread=True):
    x = RNG.standard_normal(shape)
    if spread:
        x = x * np.exp(RNG.uniform(-2, 2, shape[:-1] + (1,)))
    return x.astype(np.float32)


INPUTS = {
    "x": _data(130, 600), "w": _data(260, 600), "w_groups": _data(3, 260, 600, spread=False),
    "c": 10 * _data(130, 260), "c_k_grouped": _data(2, 2, 600, 256),
    "group_sizes": np.array([50, 0, 80], np.int32),
    "m_indices": np.repeat(np.array([0, -1, 2], np.int32), [40, 60, 30]),
    "masked_m": np.array([7, 0, 130], np.int32),
    "k_sizes": np.array([128, 0], np.int32),
    "router": 0.1 * _data(600, 4), "gate_up": 0.05 * _data(4, 600, 256), "down": 0.05 * _data(4, 128, 600),
}


def _family_outputs(i, expert_parallel=True):
    """Each family's output on the inputs `i` (INPUTS as arrays), as {name: array or tuple of arrays}."""
    bf16 = lambda t: t.astype(jnp.bfloat16)  # noqa: E731
    x, w, wg = i["x"], i["w"], i["w_groups"]
    a = dg.per_token_cast_to_fp8(bf16(x))
    b = dg.per_block_cast_to_fp8(bf16(w))
    bg = jax.vmap(dg.per_block_cast_to_fp8)(bf16(wg))
    am = jax.vmap(dg.per_token_cast_to_fp8)(bf16(jnp.stack([x, x[::-1], x * 0.5])))
    out = {"a": a, "b": b, "dense": dg.fp8_gemm_nt(a, b)}
    out["dense_c"] = dg.fp8_gemm_nt(a, b, c=i["c"], out_dtype=jnp.float32)
    out["dense_tn"] = dg.fp8_gemm_tn((a[0].T, a[1]), (b[0].T, b[1]))  # A [K, M], B [K, N]
    out["ragged"] = dg.fp8_grouped_gemm_nt(a, bg, i["group_sizes"])
    out["contiguous"] = dg.m_grouped_fp8_gemm_nt_contiguous(a, bg, i["m_indices"])
    masked = dg.m_grouped_fp8_gemm_nt_masked(am, bg, i["masked_m"], 64)
    out["masked"] = _computed_rows(masked, i["masked_m"])
    tokens = dg.per_token_cast_to_fp8(bf16(x[:128].T)), dg.per_token_cast_to_fp8(bf16(w[:128, :256].T))
    out["k_grouped"] = dg.k_grouped_fp8_gemm_nt_contiguous(*tokens, i["k_sizes"])
    out["fp8_dot"] = dg.fp8_dot(x, w.T)
    out["fp8_dot_grad"] = jax.grad(lambda p, q: dg.fp8_dot(p, q).sum(), (0, 1))(x, w.T)
    out["fp8_dot_mixed"] = dg.fp8_dot(bf16(x), w.T)  # bf16, x's dtype
    rhs = jnp.swapaxes(wg, 1, 2)
    out["ragged_dot_grad"] = jax.grad(lambda p, q: dg.ragged_dot(p, q, i["group_sizes"]).sum(), (0, 1))(x, rhs)
    out["ragged_dot_mixed"] = dg.ragged_dot(bf16(x), rhs, i["group_sizes"])  # float32, as jax.lax.ragged_dot's
    params = (x[:64], i["router"], i["gate_up"], i["down"])
    out["moe"] = nn.moe(*params, top_k=2)
    out["moe_grad"] = jax.grad(lambda *p: nn.moe(*p, top_k=2).astype(jnp.float32).sum(), (0, 1, 2, 3))(*params)
    out["linear"] = nn.fp8_linear(x, w.T, i["c"][0])
    out.update(_batched_outputs(i, a, am, bg, tokens))
    if expert_parallel and len(jax.devices()) >= 2:  # the expert-parallel layer on two devices (the CPU suite: 8)
        mesh = jax.make_mesh((2,), ("ep",), axis_types=(jax.sharding.AxisType.Auto,), devices=jax.devices()[:2])
        out["moe_expert_parallel_grad"] = jax.grad(
            lambda *p: nn.moe(*p, top_k=2, mesh=mesh, axis_name="ep").astype(jnp.float32).sum(), (0, 1, 2, 3))(*params)
    return out


def _computed_rows(d, masked_m):
    """The masked GEMM's output d [G, M, N] with the rows past masked_m (unspecified) zeroed."""
    rows = jnp.arange(d.shape[1], dtype=jnp.int32)
    return jnp.where(rows[None, :, None] < masked_m[:, None, None], d, 0)


def _batched_outputs(i, a, am, bg, tokens):
    """vmap over each family (the batching rules fold the batch into rows, groups or N)."""
    two = lambda t: jax.tree.map(lambda u: jnp.stack([u, u * 0.5 if u.dtype == jnp.float32 else u]), t)  # noqa: E731
    sizes2 = jnp.stack([i["group_sizes"], i["group_sizes"][::-1]])
    out = {}
    out["vmap_dense_c"] = jax.vmap(lambda c: dg.fp8_gemm_nt(a, (bg[0][0], bg[1][0]), c=c, out_dtype=jnp.float32))(
        jnp.stack([i["c"], -i["c"]]))
    out["vmap_ragged"] = jax.vmap(lambda s: dg.fp8_grouped_gemm_nt(a, bg, s))(sizes2)
    out["vmap_ragged_weights"] = jax.vmap(lambda b: dg.fp8_grouped_gemm_nt(a, b, i["group_sizes"]))(two(bg))
    masked_m2 = jnp.stack([i["masked_m"], i["masked_m"][::-1]])
    masked = jax.vmap(lambda m: dg.m_grouped_fp8_gemm_nt_masked(am, bg, m, 64))(masked_m2)
    out["vmap_masked"] = jax.vmap(_computed_rows)(masked, masked_m2)
    out["vmap_contiguous"] = jax.vmap(lambda ids: dg.m_grouped_fp8_gemm_nt_contiguous(a, bg, ids))(
        jnp.stack([i["m_indices"], i["m_indices"][::-1]]))
    out["vmap_k_grouped_c"] = jax.vmap(lambda c: dg.k_grouped_fp8_gemm_nt_contiguous(*tokens, i["k_sizes"], c=c))(
        i["c_k_grouped"])
    return out


MODES = {
    "default": contextlib.nullcontext,
    "x64": lambda: jax.enable_x64(True),
    "rank_promotion_raise": lambda: jax.numpy_rank_promotion("raise"),
    "strict_dtype_promotion": lambda: jax.numpy_dtype_promotion("strict"),
    "debug_nans_infs": lambda: _both(jax.debug_nans(True), jax.debug_infs(True)),
    # (host-to-device: the expert-parallel program's operands move between devices as any such program's would)
    "transfer_guard": lambda: jax.transfer_guard_host_to_device("disallow"),
    "checking_leaks": jax.checking_leaks,
    "x64_strict": lambda: _both(jax.enable_x64(True), jax.numpy_rank_promotion("raise"),
                                jax.numpy_dtype_promotion("strict")),
}


def _run(mode):
    """The outputs under `mode` (inputs put on the device first, the program jitted inside the mode)."""
    with MODES[mode]():
        outputs = jax.block_until_ready(jax.jit(_family_outputs)(jax.device_put(INPUTS)))
    return jax.tree.map(np.asarray, outputs)


@contextlib.contextmanager
def _both(*modes):
    with contextlib.ExitStack() as stack:
        for mode in modes:
            stack.enter_context(mode)
        yield


@pytest.fixture(scope="module")
def default_outputs():
    return _run("default")


@pytest.mark.parametrize("mode", [m for m in MODES if m != "default"])
def test_mode_changes_no_result(mode, default_outputs):
    got = _run(mode)
    want = dict(jax.tree_util.tree_leaves_with_path(default_outputs))
    for path, g in jax.tree_util.tree_leaves_with_path(got):
        w, where = want[path], f"{mode}: {jax.tree_util.keystr(path)}"
        assert g.dtype == w.dtype and g.shape == w.shape, f"{where}: {g.dtype}{g.shape} against {w.dtype}{w.shape}"
        if kernels_active():  # the same kernels either way; allow for a reduction order that is not fixed
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-6, err_msg=where)
        else:
            np.testing.assert_array_equal(g, w, err_msg=where)
    assert len(want) == len(jax.tree.leaves(got))


@pytest.mark.parametrize("fn", ["ragged", "masked"])
def test_int64_group_data_under_x64_is_clamped_to_int32(fn):
    """Under x64 `jnp.array([...])` is int64; values past int32's range count as int32's limits, as NumPy int64 does."""
    bf16 = lambda t: jnp.asarray(t, jnp.bfloat16)  # noqa: E731
    x = INPUTS["x"]
    a = dg.per_token_cast_to_fp8(bf16(x))
    bg = jax.vmap(dg.per_block_cast_to_fp8)(bf16(INPUTS["w_groups"]))
    am = jax.vmap(dg.per_token_cast_to_fp8)(bf16(np.stack([x, x, x])))
    if fn == "ragged":
        call = lambda data: dg.fp8_grouped_gemm_nt(a, bg, data)  # noqa: E731
        wide, clamped = [2**40, -(2**40), 5], [INT32_MAX, -(2**31), 5]
    else:
        call = lambda data: dg.m_grouped_fp8_gemm_nt_masked(am, bg, data, 64)  # noqa: E731
        wide, clamped = [2**33 + 3, -(2**35), 9], [INT32_MAX, -(2**31), 9]
    with jax.enable_x64(True):
        data = jnp.array(wide)
        assert data.dtype == jnp.int64
        got = np.asarray(jax.jit(call)(data).astype(jnp.float32))
    want = np.asarray(call(jnp.array(clamped, jnp.int32)).astype(jnp.float32))
    if fn == "masked":  # rows past masked_m are unspecified: compare the computed ones (all of group 0, 9 of group 2)
        got, want = np.concatenate([got[0], got[2, :9]]), np.concatenate([want[0], want[2, :9]])
    np.testing.assert_array_equal(got, want)


def _cuda_calls(mode):
    """The program's calls of our kernels as lowered for CUDA under `mode` (SSA names and locations dropped)."""
    shapes = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), INPUTS)
    with MODES[mode]():
        program = jax.jit(partial(_family_outputs, expert_parallel=False))
        text = program.trace(shapes).lower(lowering_platforms=("cuda",)).as_text()
    calls = [line for line in text.splitlines() if "custom_call @jdg_" in line]
    return [re.sub(r"%[0-9a-z_]+(:[0-9]+)?", "%", re.sub(r"loc\(.*\)$", "", line.strip())) for line in calls]


@pytest.mark.parametrize("mode", ["x64", "rank_promotion_raise", "strict_dtype_promotion", "x64_strict"])
def test_mode_lowers_the_same_kernel_calls(mode):
    """On a GPU the kernels see the same operands (types included) and attributes under each mode."""
    want = _cuda_calls("default")
    assert len(want) > 20  # every family's forward and backward GEMMs and quantization kernels
    assert _cuda_calls(mode) == want


def test_demo_runs_under_x64_with_strict_promotion():
    """The demo's parameters are scaled by Python floats (weak), not NumPy float64 scalars, which x64 with strict
    promotion refuses to mix with float32 arrays."""
    from jax_deepgemm import demo

    shape = demo.MoEShape(tokens=64, hidden=256, intermediate=128, experts=4, top_k=2)
    want = demo.init_params(shape, jax.random.key(0))
    with MODES["x64_strict"]():
        got = demo.init_params(shape, jax.random.key(0))
        assert demo.run(shape, repeats=1)["fp8_forward_ms"] > 0
    for name in want:
        assert got[name].dtype == want[name].dtype, name
        np.testing.assert_array_equal(np.asarray(got[name]), np.asarray(want[name]), err_msg=name)
