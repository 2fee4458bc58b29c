"""Sharded jit on several sm_90 GPUs: the partitioned call runs the FP8 kernel on each GPU's shard (the compiled
program holds our FFI call and moves no data between GPUs, except the all-reduce of a split K) and matches the
unsharded call. The same cases run on 8 CPU devices in test_sharding.py.

Skipped, saying why, unless at least two sm_90 GPUs are present.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import q_lhs, q_lhs_batched, q_rhs, q_rhs_batched, randn
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

import jax_deepgemm as dg
from jax_deepgemm import runtime

_SM90 = [d for d in runtime.cuda_devices() if runtime.is_sm90(d)]
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(len(_SM90) < 2, reason=f"needs 2 or more sm_90 GPUs; {len(_SM90)} present")]

MOVES = ("all-gather", "all-to-all", "collective-permute")


def _mesh():
    return jax.make_mesh((len(_SM90),), ("x",), axis_types=(AxisType.Auto,), devices=_SM90)


def _put(tree, specs, mesh):
    return type(tree)(jax.tree.map(lambda x, s=s: jax.device_put(x, NamedSharding(mesh, s or P())), t)
                      for t, s in zip(tree, specs))


def _cases(d):
    m, n, k = 64 * d, 256 * d, 256 * d
    a, b = q_lhs(randn(1, (m, k))), q_rhs(randn(2, (n, k)))
    ma, mb = q_lhs_batched(randn(3, (2 * d, 64, 512))), q_rhs_batched(randn(4, (2 * d, 384, 512)))
    masked_m = jnp.arange(2 * d, dtype=jnp.int32) * 7 % 65
    dense = jax.jit(dg.fp8_gemm_nt)
    masked = jax.jit(lambda a, b, mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, 32, out_dtype=jnp.float32))
    return [
        ("dense M", dense, (a, b), (P("x"), None), False),
        ("dense N", dense, (a, b), (None, P("x")), False),
        ("dense K", dense, (a, b), (P(None, "x"), P(None, "x")), True),
        ("masked experts", masked, (ma, mb, masked_m), (P("x"), P("x"), P("x")), False),
    ]


@pytest.mark.parametrize("index", range(4))
def test_sharded_jit_runs_the_kernel_on_every_gpu(index):
    mesh = _mesh()
    name, f, args, specs, reduces = _cases(len(_SM90))[index]
    sharded = _put(args, specs, mesh)
    hlo = f.lower(*sharded).compile().as_text()
    assert "jdg_fp8_gemm" in hlo, f"{name}: the kernel is not in the compiled program"
    assert not [c for c in MOVES if c in hlo], f"{name}: data moves between GPUs"
    assert ("all-reduce" in hlo) == reduces
    got, expected = np.asarray(f(*sharded), np.float64), np.asarray(f(*args), np.float64)
    if name.startswith("masked"):  # rows past masked_m are unspecified
        rows = np.arange(64)[None, :] < np.asarray(args[2])[:, None]
        got, expected = got[rows], expected[rows]
    assert dg.calc_diff(got, expected) < 1e-6
