"""Sharded jit on several sm_90 GPUs, the splits that the partition callback rewrites (test_multi_gpu.py has the
plain ones: dense over M and N, masked and k-grouped over experts): K split (per-GPU float32 partial products and an
all-reduce), the ragged layout over M (group sizes clipped to each GPU's rows) and the contiguous layout over M.
Each runs our kernel per shard, moves no other data, and matches the unsharded call. The same cases run on 8 CPU
devices in test_sharding.py.

Skipped, saying why, unless at least two sm_90 GPUs are present.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import q_lhs, q_rhs_batched, q_rhs, randn
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

import jax_deepgemm as dg
from jax_deepgemm import runtime

_SM90 = [d for d in runtime.cuda_devices() if runtime.is_sm90(d)]
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(len(_SM90) < 2, reason=f"needs 2 or more sm_90 GPUs; {len(_SM90)} present")]

MOVES = ("all-gather", "all-to-all", "collective-permute")


def _put(tree, specs, mesh):
    return tuple(jax.tree.map(lambda x, s=s: jax.device_put(x, NamedSharding(mesh, s or P())), t)
                 for t, s in zip(tree, specs))


def _case(name, d):
    m, n, k = 256 * d, 512, 512 * d
    if name == "dense K":
        return jax.jit(dg.fp8_gemm_nt), (q_lhs(randn(1, (m, k))), q_rhs(randn(2, (n, k)))), \
            (P(None, "x"), P(None, "x"))
    if name == "ragged M":
        sizes = jnp.asarray([100, 0, 37 * d, 300 * d], jnp.int32)  # groups straddle the GPUs' row blocks
        return jax.jit(dg.fp8_grouped_gemm_nt), (q_lhs(randn(3, (m, 512))), q_rhs_batched(randn(4, (4, n, 512))),
                                                 sizes), (P("x"), None, None)
    runs = np.arange(2 * d)
    ids = np.repeat(np.where(runs == 1, -1, runs % 3), 128)  # 128-row runs, one of them padding (-1)
    return jax.jit(dg.m_grouped_fp8_gemm_nt_contiguous), (q_lhs(randn(5, (m, 512))),
                                                          q_rhs_batched(randn(6, (3, n, 512))),
                                                          jnp.asarray(ids, jnp.int32)), (P("x"), None, P("x"))


@pytest.mark.parametrize("name", ["dense K", "ragged M", "contiguous M"])
def test_partitioned_calls_run_the_kernel_on_every_gpu(name):
    mesh = jax.make_mesh((len(_SM90),), ("x",), axis_types=(AxisType.Auto,), devices=_SM90)
    f, args, specs = _case(name, len(_SM90))
    sharded = _put(args, specs, mesh)
    hlo = f.lower(*sharded).compile().as_text()
    assert "jdg_fp8_gemm" in hlo, "the kernel is not in the compiled program"
    assert not [c for c in MOVES if c in hlo], "data moves between GPUs"
    assert ("all-reduce" in hlo) == (name == "dense K")
    got, expected = np.asarray(f(*sharded), np.float64), np.asarray(f(*args), np.float64)
    assert dg.calc_diff(got, expected) < 1e-5  # K split: float32 partial sums in another order, bf16 rounding
