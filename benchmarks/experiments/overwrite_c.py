"""overwrite_c=True (D written over C's buffer through the FFI alias) against False: does XLA then spare the copy of C
that a lax.scan carry or a donated accumulator needs without it, and what does it cost where C stays live after the
call? On an sm_90 GPU, from the repo root with the package built: `python benchmarks/experiments/overwrite_c.py`.
(Measured first with the alias behind an experiment flag, NOTES 162; this script runs the landed keyword.)

1. Correctness, small problems with tails (dense f32 out with f32 C; k-grouped with an empty group): with the alias
   against without it, C a jit argument (XLA copies it), donated, and carried by lax.scan; the results must be
   bitwise equal (the same kernel and sums) and a non-donated C unchanged.
2. The copies XLA's compiled program holds (copy / copy-start instructions) for the scan program, each way.
3. Time per step (wall, median of 15 jitted runs, block_until_ready): an 8-step scan accumulating into C, and one
   call whose C stays live after it (returned beside D), each way, on dense 4096 x 7168 x 2048 (f32 C, 117 MB) and
   k-grouped 4 x 4096 x 7168 x 2048 per group (470 MB).
"""

import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

import jax_deepgemm as dg


def dense(a, b, c, overwrite):
    return dg.fp8_gemm_nt(a, b, c=c, out_dtype=jnp.float32, overwrite_c=overwrite)


def k_grouped(a, b, sizes, c, overwrite):
    return dg.k_grouped_fp8_gemm_nt_contiguous(a, b, sizes, c=c, overwrite_c=overwrite)


def scan_of(gemm, steps):
    def run(operands, c):
        return jax.lax.scan(lambda acc, _: (gemm(*operands, acc), None), c, None, length=steps)[0]
    return run


def cast_pair(rng, m, k):
    return jax.jit(dg.per_token_cast_to_fp8)(jnp.asarray(rng.standard_normal((m, k)), jnp.bfloat16))


def check(name, gemm, operands, c_host):
    out = {}
    for on in (False, True):
        gemm_on = partial(gemm, overwrite=on)
        c = jnp.asarray(c_host)
        plain = np.asarray(jax.jit(gemm_on)(*operands, c))
        kept = np.array_equal(np.asarray(c), c_host)
        donated = np.asarray(jax.jit(gemm_on, donate_argnums=len(operands))(*operands, jnp.asarray(c_host)))
        scanned = np.asarray(jax.jit(scan_of(gemm_on, 4))(operands, jnp.asarray(c_host)))
        out[on] = (plain, donated, scanned, kept)
    same = [np.array_equal(x, y) for x, y in zip(out[False][:3], out[True][:3])]
    print(f"check {name}: alias == none (argument, donated, scan) {same}, C kept {out[True][3]}, "
          f"max |d| {np.abs(out[False][0]).max():.3g}", flush=True)


def copies(gemm, operands, c):
    text = jax.jit(scan_of(gemm, 8)).lower(operands, c).compile().as_text()
    return sum(" copy(" in line or " copy-start(" in line for line in text.splitlines())


def step_us(fn, *args, steps=1):
    fn = jax.jit(fn)
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(15):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return 1e6 * float(np.median(times)) / steps


def timing(name, gemm, operands, c):
    for on in (False, True):
        gemm_on = partial(gemm, overwrite=on)
        scan_us = step_us(scan_of(gemm_on, 8), operands, c, steps=8)
        live_us = step_us(lambda ops, c: (gemm_on(*ops, c), c), operands, c)
        print(f"overwrite_c={int(on)} {name}: scan {scan_us:9.1f} us per step ({copies(gemm_on, operands, c)} copies), "
              f"C live after {live_us:9.1f} us", flush=True)


rng = np.random.default_rng(1)
a, b = cast_pair(rng, 300, 640), dg.per_block_cast_to_fp8(jnp.asarray(rng.standard_normal((1000, 640)), jnp.bfloat16))
check("dense 300 x 1000 x 640", dense, (a, b), rng.standard_normal((300, 1000)).astype(np.float32))
sizes = jnp.asarray([512, 0, 384, 128], jnp.int32)
a, b = cast_pair(rng, 320, 1024), cast_pair(rng, 1000, 1024)
check("k-grouped 4 x 320 x 1000", k_grouped, (a, b, sizes), rng.standard_normal((4, 320, 1000)).astype(np.float32))

a = cast_pair(rng, 4096, 2048)
b = dg.per_block_cast_to_fp8(jnp.asarray(rng.standard_normal((7168, 2048)), jnp.bfloat16))
timing("dense 4096 x 7168 x 2048", dense, (a, b), jnp.zeros((4096, 7168), jnp.float32))
a, b = cast_pair(rng, 4096, 4 * 2048), cast_pair(rng, 7168, 4 * 2048)
timing("k-grouped 4 x 4096 x 7168 x 2048", k_grouped, (a, b, jnp.full((4,), 2048, jnp.int32)),
       jnp.zeros((4, 4096, 7168), jnp.float32))
