"""Quick timings of the M-grouped FP8 kernels on DeepGEMM's grouped shapes (GPU.md), for GPU sessions.

Per shape: `kernel` = device time of the jdg kernel and `program` = of every kernel of the jitted op (layout
transposes included), both from the profiler trace with an L2 flush before each call (jax_deepgemm.bench.profile,
median of ITERS); `wall` = wall time per call, back to back. TFLOPS (from the kernel time) count valid rows only.
With --wall, wall time only (median of 20 waited calls), no profiler.

    python tools/time_grouped.py [--wall]
"""

from __future__ import annotations

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jax_deepgemm as dg

ITERS = 10
WALL_ONLY = "--wall" in sys.argv
_details = [""]


def _median_s(fn, *args, repeats=20):
    """Seconds per call: the jdg kernel's device time (wall time per call with --wall); prints the details."""
    if not WALL_ONLY:
        from jax_deepgemm.bench import profile

        kernel = profile(fn, args, iters=ITERS, kernel_prefix="jdg_")
        program = profile(fn, args, iters=ITERS, kernel_prefix=None)
        _details[0] = f"program {program['us']:8.1f} us  wall {kernel['wall_us']:8.1f} us"
        return kernel["us"] * 1e-6
    jax.block_until_ready(fn(*args))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples))


def _weights(g, n, k):
    w = jax.random.normal(jax.random.key(1), (g, n, k), jnp.bfloat16)
    return jax.jit(jax.vmap(dg.per_block_cast_to_fp8))(w)


def _report(name, seconds, flops):
    print(f"{name:<48} {'kernel' if not WALL_ONLY else 'wall'} {seconds * 1e6:9.1f} us "
          f"{flops / seconds / 1e12:8.1f} TFLOPS  {_details[0]}", flush=True)


def main():
    rng = np.random.default_rng(0)
    print(f"device: {jax.devices()[0].device_kind}")
    for g, per_group, n, k in [(4, 8192, 4096, 7168), (4, 8192, 7168, 2048), (8, 4096, 4096, 7168),
                               (8, 4096, 7168, 2048)]:
        # DeepGEMM's test data: [0.7, 1.3] x M rows per group, each run aligned to 128.
        rows = [int(per_group * rng.uniform(0.7, 1.3)) for _ in range(g)]
        aligned = [-(-r // 128) * 128 for r in rows]
        m = sum(aligned)
        ids = np.concatenate([np.r_[np.full(r, e), np.full(p - r, -1)] for e, (r, p) in
                              enumerate(zip(rows, aligned))]).astype(np.int32)
        a = jax.jit(dg.per_token_cast_to_fp8)(jax.random.normal(jax.random.key(0), (m, k), jnp.bfloat16))
        b = _weights(g, n, k)
        flops = 2 * sum(rows) * n * k
        t = _median_s(jax.jit(dg.m_grouped_fp8_gemm_nt_contiguous), a, b, jnp.asarray(ids))
        _report(f"contiguous {g}x{per_group} N={n} K={k}", t, flops)
        unaligned = jnp.asarray(rows, jnp.int32)
        a_u = (a[0][: sum(rows)], a[1][: sum(rows)])
        t = _median_s(jax.jit(dg.fp8_grouped_gemm_nt), a_u, b, unaligned)
        _report(f"ragged (unaligned) {g}x{per_group} N={n} K={k}", t, flops)
        del a, a_u, b
    max_m = 4096
    for g, expected, n, k in [(1, 1024, 4096, 7168), (1, 1024, 7168, 2048), (2, 512, 4096, 7168),
                              (2, 512, 7168, 2048), (4, 256, 4096, 7168), (4, 256, 7168, 2048)]:
        masked = np.asarray([int(expected * rng.uniform(0.7, 1.3)) for _ in range(g)], np.int32)
        x = jax.random.normal(jax.random.key(2), (g, max_m, k), jnp.bfloat16)
        a = jax.jit(jax.vmap(dg.per_token_cast_to_fp8))(x)
        b = _weights(g, n, k)
        fn = jax.jit(lambda a, b, mm, e=int(1.2 * expected): dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, e))
        t = _median_s(fn, a, b, jnp.asarray(masked))
        _report(f"masked {g}x{expected} N={n} K={k}", t, 2 * int(masked.sum()) * n * k)
        del a, b, x


if __name__ == "__main__":
    main()
