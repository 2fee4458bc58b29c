"""Shared helpers for the CPU test suite: random (never zero) inputs, jitted quantization, and the accuracy checks
against the float64 NumPy oracle in tests/oracle.py.

Test modules import these directly (`from conftest import ...`); pytest puts tests/ on sys.path.
"""

from __future__ import annotations

import functools
import os
import zlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

# The multi-device tests (test_sharding.py) use a mesh of 8 CPU devices, which XLA only makes when asked before the
# CPU backend starts: here, before anything calls jax.devices(). Other tests use the first device as before.
CPU_DEVICES = 8
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    jax.config.update("jax_num_cpu_devices", CPU_DEVICES)

# The suite tests the installed package (`./dev.sh test` installs it; `pip install -e .` for development): the source
# tree is deliberately not put on sys.path, where it would shadow the installed compiled extension.
import jax_deepgemm as dg  # noqa: E402
from jax_deepgemm import runtime  # noqa: E402

import oracle  # noqa: E402

E4M3 = jnp.float8_e4m3fn
E5M2 = jnp.float8_e5m2
UE8M0 = jnp.float8_e8m0fnu
BF16 = jnp.bfloat16
F32 = jnp.float32
INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)


def kernels_active() -> bool:
    """True when the GEMMs run the Hopper kernels (then f32 accumulation is the tensor cores', a little looser)."""
    return bool(runtime.cuda_devices()) and runtime.use_kernels()


def pytest_terminal_summary(terminalreporter):
    """Which path the ops took, in every run's summary (with -q too): on a GPU machine the files written for the
    reference pass either way, so a log must say whether the kernels ran."""
    device = jax.devices()[0]
    try:
        path = "active" if kernels_active() else "inactive: every op runs the pure-JAX reference"
    except RuntimeError as e:  # JAX_DEEPGEMM_STRICT on a GPU the kernels do not take
        path = f"unavailable ({e})"
    terminalreporter.write_line(f"jax_deepgemm: default device {device.platform} ({device.device_kind}), "
                                f"kernels {path}")


# Elementwise tolerance, relative to the bound sum_k |a_k b_k| + |c| (float32 accumulation over K <= 512 of exact
# FP8 products stays far below 1e-5 on the reference; a wrong scale or block shows up as O(1)).
# The Hopper tensor cores accumulate FP8 products with a reduced mantissa (products are aligned to the largest
# exponent of each k32 step and only ~13-14 bits are kept; the reason for the per-128-K promotion), so with rows and
# columns whose magnitudes differ by e^4 an element can be off by ~5e-4 of the bound (seen on an H200 with f32 out).
F32_RTOL = 1e-5
F32_RTOL_KERNELS = 2e-3


def seed_of(*parts) -> int:
    """A stable seed from a test's parameters (independent of test order and of PYTHONHASHSEED)."""
    return zlib.crc32(repr(parts).encode()) & 0x7FFFFFFF


@functools.partial(jax.jit, static_argnames=("shape", "dtype", "spread"))
def _randn(key, shape, dtype, spread):
    k1, k2, k3 = jax.random.split(key, 3)
    x = jax.random.normal(k1, shape, jnp.float32)
    if spread and len(shape) >= 2:
        # Magnitudes that vary over rows and columns (factors e^-2 .. e^2), so that per-block scales differ
        # substantially and a scale applied to the wrong block or row is caught.
        rows = jnp.exp(jax.random.uniform(k2, shape[:-1] + (1,), minval=-2.0, maxval=2.0, dtype=jnp.float32))
        cols = jnp.exp(jax.random.uniform(k3, (shape[-1],), minval=-2.0, maxval=2.0, dtype=jnp.float32))
        x = x * rows * cols
    return x.astype(dtype)


def randn(seed: int, shape, dtype=jnp.float32, spread: bool = True) -> jax.Array:
    """jax.random.normal data (with varying magnitudes when `spread`), never all zeros."""
    return _randn(jax.random.key(seed), tuple(shape), jnp.dtype(dtype), spread)


_per_token = jax.jit(dg.per_token_cast_to_fp8, static_argnames=("use_ue8m0",))
_per_block = jax.jit(dg.per_block_cast_to_fp8, static_argnames=("use_ue8m0",))


def q_lhs(x, ue8m0: bool = False, scale_dtype=None):
    """1x128 quantization (activations; also the per-row 1D1D recipe for weights)."""
    data, scale = _per_token(x, use_ue8m0=ue8m0)
    return data, (scale if scale_dtype is None else scale.astype(scale_dtype))


def q_rhs(x, ue8m0: bool = False, scale_dtype=None):
    """128x128 quantization (weights)."""
    data, scale = _per_block(x, use_ue8m0=ue8m0)
    return data, (scale if scale_dtype is None else scale.astype(scale_dtype))


def q_lhs_batched(x, ue8m0: bool = False):
    return jax.vmap(lambda t: _per_token(t, use_ue8m0=ue8m0))(x)


def q_rhs_batched(x, ue8m0: bool = False):
    return jax.vmap(lambda t: _per_block(t, use_ue8m0=ue8m0))(x)


def e5m2_pair(seed: int, rows: int, k: int, scale_rows: int):
    """A pair with float8_e5m2 data and random positive float32 scales (shape [scale_rows, kb])."""
    data = randn(seed, (rows, k), spread=False).astype(E5M2)
    scale = jnp.exp(jax.random.uniform(jax.random.key(seed + 1), (scale_rows, oracle.kblocks(k)), jnp.float32,
                                       minval=-3.0, maxval=3.0))
    return data, scale


def to64(x) -> np.ndarray:
    return oracle.f64(x)


def assert_matches(out, expected, bound, out_dtype, *, rows=None):
    """out (any array) against the float64 oracle `expected`, with `bound` = sum_k |a b| + |c| per element.

    Checks the dtype exactly, then the contract's calc_diff (< 1e-3 for bf16) and a much tighter elementwise bound:
    bf16: one bf16 rounding (2^-8 relative) plus float32 accumulation; f32: float32 accumulation only.
    `rows` (a boolean mask over the leading dims) restricts the comparison to the rows that are specified.
    """
    out_dtype = jnp.dtype(out_dtype)
    assert out.dtype == out_dtype, f"output dtype {out.dtype}, expected {out_dtype}"
    got = to64(out)
    assert got.shape == expected.shape, f"output shape {got.shape}, expected {expected.shape}"
    if rows is not None:
        got, expected, bound = got[rows], expected[rows], bound[rows]
    assert np.all(np.isfinite(got)), "non-finite values in the output"
    rtol = F32_RTOL_KERNELS if kernels_active() else F32_RTOL
    if out_dtype == jnp.float32:
        allowed = rtol * bound + 1e-30
        diff_limit = 1e-6 if kernels_active() else 1e-9
    else:
        allowed = 2.0**-8 * np.abs(expected) + rtol * bound + 1e-30
        diff_limit = 1e-3
    err = np.abs(got - expected)
    worst = np.unravel_index(np.argmax(err - allowed), err.shape) if err.size else None
    assert np.all(err <= allowed), (f"elementwise error {err[worst]:.3e} > allowed {allowed[worst]:.3e} at {worst} "
                                    f"(got {got[worst]!r}, expected {expected[worst]!r})")
    if expected.size and np.any(expected != 0):
        diff = dg.calc_diff(got, expected)
        assert diff < diff_limit, f"calc_diff {diff:.3e} >= {diff_limit}"


def cosine(x, y) -> float:
    x, y = to64(x).ravel(), to64(y).ravel()
    return float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)))


@pytest.fixture
def restore_num_sms():
    """Restores the SM cap (set_num_sms has no 'unset'; the module-level cap is put back after the test), and, as
    set_num_sms does, clears JAX's caches where it changed: no later test reuses a lowering made under the cap."""
    saved = runtime._num_sms_cap
    yield
    if runtime._num_sms_cap != saved:
        runtime._num_sms_cap = saved
        jax.clear_caches()


def assert_overwrite_c_changes_no_bit(gemm, operands, c):
    """gemm(*operands, c, overwrite_c) with D written over C's buffer gives the bits of D in a buffer of its own:
    with C a jit argument (XLA copies it: the caller's C is unchanged), donated, and carried by a lax.scan. For the
    GPU tests: the alias is the CUDA lowering's."""
    c_bits = np.asarray(c)
    assert "output_operand_alias" in jax.jit(lambda *ops: gemm(*ops, True)).lower(*operands, c).as_text()
    assert_same_either_way(lambda over: jax.jit(lambda *ops: gemm(*ops, over))(*operands, c))
    np.testing.assert_array_equal(np.asarray(c), c_bits)
    assert_same_either_way(lambda over: jax.jit(lambda *ops: gemm(*ops, over), donate_argnums=len(operands))(
        *operands, jnp.asarray(c_bits)))
    step = lambda over: lambda acc, _: (gemm(*operands, acc, over), None)  # noqa: E731
    assert_same_either_way(lambda over: jax.jit(lambda c: jax.lax.scan(step(over), c, None, length=3)[0])(c))


def assert_same_either_way(run):
    """run(overwrite_c) gives the same values with D written over C's buffer as without (bit for bit: on a GPU the
    same kernel runs either way)."""
    for got, want in zip(jax.tree.leaves(run(True)), jax.tree.leaves(run(False))):
        np.testing.assert_array_equal(to64(got), to64(want))
