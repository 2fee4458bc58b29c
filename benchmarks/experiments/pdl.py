"""Programmatic dependent launch (DG_PDL, experiments/pdl.patch applied) on and off, on jitted programs of 16 GEMM
launches each, every launch after a kernel (benchmarks/NOTES.md 86): wall time per call back to back, the device
span of a call and the gap before each of our kernels (profiler). Rounds alternate off / on; each compiles its
programs afresh (DG_PDL is read when a program is compiled).
  mlp M:     a decode MLP's two GEMMs 8 times: [M, 7168] x [2048, 7168]^T, the result cast to FP8 by XLA (per token),
             x [7168, 2048]^T, cast again (our kernels after XLA's);
  chain M:   D = C + A_i B^T 16 times, each launch's C the one before's D (M x 7168 x 2048, f32; ours after ours);
  masked:    16 masked launches, 8 groups of up to 256 rows (masked_m ~ 48), 4096 x 7168 (ours after ours).
  python benchmarks/experiments/pdl.py [ROUNDS]
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jax_deepgemm as dg
from jax_deepgemm import bench

ITERS, WALL_ROUNDS = 30, 5


def wall_us(fn, args):
    jax.block_until_ready(fn(*args))  # compile (DG_PDL read here) and warm up
    return bench.wall_us_per_call(fn, args, ITERS, WALL_ROUNDS)


def device_spans(fn, args, calls=20):
    """Per call (each waited for, so that calls stand apart in the trace): the span from its first kernel's start to
    its last one's end, and the gap from the end of the kernel before each of ours to our kernel's start (negative
    where they overlap). Medians over the calls (us), and the number of calls found."""
    jax.block_until_ready(fn(*args))

    def run():
        for _ in range(calls):
            jax.block_until_ready(fn(*args))
    events = bench._trace_kernels(run)
    groups, current = [], [events[0]]
    for e in events[1:]:
        if e[1] - max(x[2] for x in current) > 15_000:  # the host's wait between calls
            groups.append(current)
            current = []
        current.append(e)
    groups.append(current)
    spans = [(max(x[2] for x in g) - g[0][1]) / 1e3 for g in groups]
    gaps = [(b[1] - a[2]) / 1e3 for g in groups for a, b in zip(g, g[1:]) if b[0].startswith("jdg_")]
    return float(np.median(spans)), float(np.median(gaps)), len(groups)


def rnd(key, shape):
    return jax.random.normal(jax.random.key(key), shape, jnp.float32)


def mlp_case(m):
    w1 = dg.per_block_cast_to_fp8(rnd(1, (2048, 7168)))
    w2 = dg.per_block_cast_to_fp8(rnd(2, (7168, 2048)))
    x = rnd(3, (m, 7168)).astype(jnp.bfloat16)

    def run(x, w1, w2):
        for _ in range(8):
            h = dg.fp8_gemm_nt(dg.per_token_cast_to_fp8(x), w1)
            x = dg.fp8_gemm_nt(dg.per_token_cast_to_fp8(h), w2)
        return x
    return run, (x, w1, w2)


def chain_case(m):
    a = jax.vmap(dg.per_token_cast_to_fp8)(rnd(4, (16, m, 2048)))
    b = dg.per_block_cast_to_fp8(rnd(5, (7168, 2048)))
    c = rnd(6, (m, 7168))

    def run(a, b, c):
        for i in range(16):
            c = dg.fp8_gemm_nt((a[0][i], a[1][i]), b, c=c, out_dtype=jnp.float32)
        return c
    return run, (a, b, c)


def masked_case():
    g, m = 8, 256
    a = jax.vmap(jax.vmap(dg.per_token_cast_to_fp8))(rnd(7, (16, g, m, 7168)))
    b = jax.vmap(dg.per_block_cast_to_fp8)(rnd(8, (g, 4096, 7168)))
    mm = jnp.asarray([40, 56, 48, 33, 61, 45, 52, 49], jnp.int32)

    def run(a, b, mm):
        outs = [dg.m_grouped_fp8_gemm_nt_masked((a[0][i], a[1][i]), b, mm, 48) for i in range(16)]
        return jnp.stack(outs)
    return run, (a, b, mm)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    cases = {f"mlp {m}": mlp_case(m) for m in (64, 128)}
    cases.update({f"chain {m}": chain_case(m) for m in (64, 128)})
    cases["masked"] = masked_case()
    print(jax.devices()[0].device_kind, flush=True)
    print("us per call of 16 launches, DG_PDL=0 / 1: wall (median of 5 loops of 30 calls back to back), device span"
          " (first kernel's start to last one's end, median of 20 calls apart), gap from the kernel before ours to"
          " ours (median)", flush=True)
    for r in range(rounds):
        for name, (run, args) in cases.items():
            times, spans = {}, {}
            for pdl in ("0", "1"):
                os.environ["DG_PDL"] = pdl
                fn = jax.jit(run)
                times[pdl] = wall_us(fn, args)
                spans[pdl] = device_spans(fn, args)
            (off, on), (s_off, s_on) = (times["0"], times["1"]), (spans["0"][0], spans["1"][0])
            print(f"round {r + 1} {name:10s} wall off {off:8.1f} on {on:8.1f} ({on / off:.3f})"
                  f" | device span off {s_off:8.1f} on {s_on:8.1f} ({s_on / s_off:.3f},"
                  f" {(s_off - s_on) / 16:5.2f} us per launch; {spans['1'][2]} calls)"
                  f" | gap before ours off {spans['0'][1]:6.2f} on {spans['1'][1]:6.2f}", flush=True)


if __name__ == "__main__":
    main()
