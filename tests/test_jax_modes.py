"""JAX's global modes change no result. Users turn these on for a whole program (jax_enable_x64 for science codes,
rank promotion 'raise' and strict dtype promotion to catch silent broadcasts and upcasts, debug_nans, a transfer
guard, leak checking); every family, the differentiable ops and the MoE layer must run under each and give the same
arrays, dtypes included, as in the default mode. Under x64, Python scalars and literals are 64-bit, so a reference
that let one promote its arithmetic (or a kernel call that took an int64 operand) would show here; group data given
as int64, as `jnp.array([...])` makes it under x64, is read as its int32-clamped value."""

from __future__ import annotations

import contextlib
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
from conftest import INT32_MAX
from families import INPUTS, assert_same_outputs, cuda_kernel_calls, family_outputs

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
        outputs = jax.block_until_ready(jax.jit(family_outputs)(jax.device_put(INPUTS)))
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
    assert_same_outputs(_run(mode), default_outputs, mode)


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
    """The program's kernel calls as lowered for CUDA under `mode`."""
    shapes = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), INPUTS)
    with MODES[mode]():
        return cuda_kernel_calls(partial(family_outputs, expert_parallel=False), shapes)


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
