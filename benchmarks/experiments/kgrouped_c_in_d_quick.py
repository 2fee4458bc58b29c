"""The shortest check of kgrouped_c_in_d.patch (NOTES 84), for a call with little device time: the in-place kernel
(JDG_EXP_C_IN_D=1) against the default one on a small k-grouped problem with hostile tails (both on the GPU; the
same sums, so they should agree to rounding), then the first benchmark row (4 x 4096 x 7168 x 8192, grouped_rows.py's
first draw) in place, then as default. Lines are flushed as they come. Run with the patch applied and built."""

import os

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import bench_grouped as bg
from jax_deepgemm import k_grouped_fp8_gemm_nt_contiguous, per_token_cast_to_fp8

bg._baseline_us = lambda fn, args, iters: 0.0


def run(in_place, a, b, sizes, c):
    os.environ["JDG_EXP_C_IN_D"] = "1" if in_place else "0"
    jax.clear_caches()
    fn = jax.jit(lambda a, b, s, c: k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c))
    return np.asarray(fn(a, b, sizes, c))


m, n = 320, 1000  # a 256-row tile and a partial one per group; N: a partial 128-column tile and a partial atom
sizes = jnp.asarray([512, 0, 384, 2**31 - 1], jnp.int32)  # an empty group, one cut at K
k = 1024
rng = np.random.default_rng(1)
a = jax.jit(per_token_cast_to_fp8)(jnp.asarray(rng.standard_normal((m, k)), jnp.bfloat16))
b = jax.jit(per_token_cast_to_fp8)(jnp.asarray(rng.standard_normal((n, k)), jnp.bfloat16))
c_host = rng.standard_normal((4, m, n)).astype(np.float32)
c = jnp.asarray(c_host)
ref, new = run(False, a, b, sizes, c), run(True, a, b, sizes, c)  # (C a jit argument: XLA copies it for the alias)
print(f"check: max |in place - default| {np.abs(new - ref).max():.3g}, max |default| {np.abs(ref).max():.3g}, "
      f"group 1 == C: {np.array_equal(new[1], c_host[1])}, C unchanged: {np.array_equal(np.asarray(c), c_host)}",
      flush=True)
for in_place in (True, False):
    os.environ["JDG_EXP_C_IN_D"] = "1" if in_place else "0"
    jax.clear_caches()
    r = bg.k_grouped_row(*bg.K_GROUPED_SHAPES[0], 20, np.random.default_rng(0))
    print(f"c_in_d={int(in_place)} {r['shape']} {r['kernel_us']:9.1f} us {r['tflops']:7.1f} TFLOPS "
          f"jit {r['jit_us']:9.1f}", flush=True)
