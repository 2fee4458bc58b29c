"""What a table row's `jit_us` holds beyond its `kernel_us` (NOTES 74): `iters` calls of one op back to back, no
flush, under the profiler. Prints per row: the wall time per call (one loop of `iters` calls; the table takes the
median of five), our kernel's median time over the first and the last fifth of the calls (a drift: the clock falling
under sustained load), every other kernel of the program with its time per call, and the idle time between one
call's last kernel and the next one's first (host dispatch not keeping up).

Usage (GPU): python benchmarks/experiments/sustained.py [iters]
"""

import sys
import time
from collections import defaultdict

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import (fp8_gemm_nt, k_grouped_fp8_gemm_nt_contiguous, m_grouped_fp8_gemm_nt_contiguous,
                          m_grouped_fp8_gemm_nt_masked)
from jax_deepgemm.bench import _trace_kernels
from jax_deepgemm.quantization import per_block_cast_to_fp8, per_token_cast_to_fp8


def normal(seed, shape):
    return jax.random.normal(jax.random.key(seed), shape, jnp.bfloat16)


def dense(m, n, k):
    a = jax.jit(per_token_cast_to_fp8)(normal(0, (m, k)))
    b = jax.jit(per_block_cast_to_fp8)(normal(1, (n, k)))
    return f"dense {m}x{n}x{k}", fp8_gemm_nt, (a, b)


def contiguous(g, per_group, n, k):
    ids = np.repeat(np.arange(g), per_group).astype(np.int32)
    a = jax.jit(per_token_cast_to_fp8)(normal(0, (g * per_group, k)))
    b = jax.jit(jax.vmap(per_block_cast_to_fp8))(normal(1, (g, n, k)))
    return f"contiguous {g}x{per_group}x{n}x{k}", m_grouped_fp8_gemm_nt_contiguous, (a, b, jnp.asarray(ids))


def masked(g, rows, n, k):
    a = jax.jit(jax.vmap(per_token_cast_to_fp8))(normal(0, (g, 4096, k)))
    b = jax.jit(jax.vmap(per_block_cast_to_fp8))(normal(1, (g, n, k)))
    mm = jnp.full((g,), rows, jnp.int32)
    return f"masked {g}x{rows}x{n}x{k}", lambda a, b, mm: m_grouped_fp8_gemm_nt_masked(a, b, mm, rows), (a, b, mm)


def k_grouped(g, m, n, k_per_group, with_c):
    sizes = jnp.full((g,), k_per_group, jnp.int32)
    a = jax.jit(per_token_cast_to_fp8)(normal(0, (m, g * k_per_group)))
    b = jax.jit(per_token_cast_to_fp8)(normal(1, (n, g * k_per_group)))
    c = jnp.zeros((g, m, n), jnp.float32) if with_c else None
    name = f"k-grouped {g}x{m}x{n}x{k_per_group}" + (" with C" if with_c else " without C")
    return name, lambda a, b, s, c: k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c), (a, b, sizes, c)


def report(name, fn, args, iters):
    jitted = jax.jit(fn)
    for _ in range(3):
        jax.block_until_ready(jitted(*args))
    start = time.perf_counter()
    for _ in range(iters):
        out = jitted(*args)
    jax.block_until_ready(out)
    wall = (time.perf_counter() - start) / iters * 1e6

    def calls():
        for _ in range(iters):
            out = jitted(*args)
        jax.block_until_ready(out)

    events = _trace_kernels(calls)
    ours = [(s, e) for n, s, e in events if n.startswith("jdg_")]
    if len(ours) != iters:
        print(f"{name}: {len(ours)} of our kernels in a trace of {iters} calls")
        return
    durations = [(e - s) / 1e3 for s, e in ours]
    fifth = max(1, iters // 5)
    others = defaultdict(float)
    for n, s, e in events:
        if not n.startswith("jdg_"):
            others[n[:60]] += (e - s) / 1e3 / iters
    busy = sum((e - s) for _, s, e in events) / 1e3
    span = (events[-1][2] - events[0][1]) / 1e3
    print(f"{name}: wall {wall:.1f} us/call; ours first fifth {np.median(durations[:fifth]):.1f}, last fifth "
          f"{np.median(durations[-fifth:]):.1f} us; trace {span / iters:.1f} us/call of which kernels "
          f"{busy / iters:.1f} (idle {(span - busy) / iters:.1f})")
    for n, us in sorted(others.items(), key=lambda x: -x[1]):
        print(f"    other kernel {us:8.1f} us/call  {n}")


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    rows = [dense(64, 7168, 2048), dense(4096, 7168, 16384), dense(4096, 7168, 2048),
            contiguous(4, 8192, 4096, 7168), masked(1, 1024, 7168, 2048),
            k_grouped(4, 4096, 7168, 8192, True), k_grouped(4, 4096, 7168, 8192, False)]
    for name, fn, args in rows:
        report(name, fn, args, iters)


if __name__ == "__main__":
    main()
