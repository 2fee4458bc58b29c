"""Grouped GEMMs on the MoE layers of published models, per GPU, off the benchmark's own shapes: does the model in
ffi/heuristics.cc, tuned on DeepGEMM's table, pick well where groups are many, small or skewed, or K is not a
multiple of 128? Kernel time only (bench.profile: L2 flushed, median of 20); one line per row. Run one process per
DG_TUNE_* setting (the knobs are read when a kernel is configured) and compare the lines by label.

    DG_TUNE_BLOCK_M=128 python benchmarks/experiments/moe_models.py bm128 [--baseline] [--masked] [--even]
        [--contiguous-only | --ragged-only] [name ...]
    python benchmarks/experiments/moe_models.py default n3072=16,8192,3072,4096   # another layer: name=G,R,N,K

Each layer is (local experts G, rows routed to them R, N, K) as one GPU holds it:
  dsv3: 7168 hidden, 2048 per expert, 256 experts top-8, 32 per GPU (8-way expert parallel); 4096 or 16384 tokens;
  qwen235: 4096 / 1536, 128 experts top-8, 16 per GPU, 8192 tokens; qwen30: 2048 / 768, 128 top-8 on one GPU,
  4096 tokens; mixtral: 4096 / 14336, 8 experts top-2 on one GPU, 8192 tokens; gptoss: 2880 / 2880, 128 experts
  top-4, 16 per GPU, 8192 tokens (K % 128 = 64). "up" is the gate and up projections together (N = 2 x the expert
  width), "down" the projection back (K = the expert width).
Group sizes: "even" as the benchmark draws them ([0.7, 1.3] x R / G), "skewed" R rows routed by lognormal expert
popularity (sigma 0.6; some groups small, the largest up to ~4x the mean). Contiguous pads each group to 128 rows (id -1).
Masked (--masked): decode, expected rows per expert E, masked_m in [0.7, 1.3] x E, buffers of 4 x E rows (>= 128);
where named, the benchmark table's masked shapes too (mGxEnNkK, e.g. m1x1024n4096k7168; drawn and buffered as above,
not as the table's own rows).
Each line ends with the heuristics' configuration for that problem on 132 SMs (both H100 and H200 have 132), as the
host computes it before the call: tile, stages, cluster, and "t", the model's estimate of the tile count (the
kernel's real count depends on the group sizes).
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import _C
from jax_deepgemm import bench_grouped as bg
from jax_deepgemm.grouped import fp8_grouped_gemm_nt, m_grouped_fp8_gemm_nt_contiguous, m_grouped_fp8_gemm_nt_masked
from jax_deepgemm.quantization import per_block_cast_to_fp8, per_token_cast_to_fp8

LAYERS = {
    "dsv3_up_4k": (32, 4096, 4096, 7168), "dsv3_down_4k": (32, 4096, 7168, 2048),
    "dsv3_up_16k": (32, 16384, 4096, 7168), "dsv3_down_16k": (32, 16384, 7168, 2048),
    "qwen235_up": (16, 8192, 3072, 4096), "qwen235_down": (16, 8192, 4096, 1536),
    "qwen30_up": (128, 32768, 1536, 2048), "qwen30_down": (128, 32768, 2048, 768),
    "mixtral_up": (8, 16384, 28672, 4096), "mixtral_down": (8, 16384, 4096, 14336),
    "gptoss_up": (16, 4096, 5760, 2880), "gptoss_down": (16, 4096, 2880, 2880),
}
MASKED = {  # name: (G, expected rows per expert, N, K)
    "dsv3_up_dec": (32, 32, 4096, 7168), "dsv3_down_dec": (32, 32, 7168, 2048),
    "qwen30_up_dec": (128, 16, 1536, 2048), "mixtral_up_dec": (8, 128, 28672, 4096),
    "gptoss_up_dec": (16, 64, 5760, 2880),
}
# The benchmark table's masked rows (bench_grouped.MASKED_SHAPES: G, expected rows, N, K), run only where named.
TABLE_MASKED = {f"m{g}x{e}n{n}k{k}": (g, e, n, k) for g, e, n, k in bg.MASKED_SHAPES}
ITERS = 20


def group_sizes(draw, g, rows, rng):
    if draw == "even":
        return [int(rows / g * rng.uniform(0.7, 1.3)) for _ in range(g)]
    popularity = rng.lognormal(0.0, 0.6, g)
    return list(rng.multinomial(rows, popularity / popularity.sum()))


def config(rows, n, k, grouping, g, expected_m=0):
    c = _C.select_fp8_gemm_config(rows, n, k, 132, grouping=grouping, num_groups=g, expected_m=expected_m)
    return f"{c['block_m']}x{c['block_n']} s{c['stages']} cl{c['cluster']} t{c['tiles']}" + (
        " seg" if c["segments"] else "") + (" tail" if c["tail_split"] else "")


def line(label, name, draw, op, us, flops, cfg, extra=""):
    print(f"{label:8s} {name:15s} {draw:6s} {op:10s} {us:9.1f} us {flops / us / 1e6:7.1f} TFLOPS  {cfg}{extra}",
          flush=True)


def m_grouped(label, name, draw, g, rows, n, k, rng, baseline, only=None):
    sizes = group_sizes(draw, g, rows, rng)
    padded = [-(-r // 128) * 128 for r in sizes]
    ids = np.concatenate([np.r_[np.full(r, e), np.full(p - r, -1)] for e, (r, p) in enumerate(zip(sizes, padded))])
    valid = sum(sizes)
    x = bg._normal(0, (sum(padded), k))
    w = bg._normal(1, (g, n, k))
    a = jax.jit(per_token_cast_to_fp8)(x)
    b = jax.jit(jax.vmap(per_block_cast_to_fp8))(w)
    flops = 2.0 * valid * n * k
    spread = f"  rows {min(sizes)}-{max(sizes)}"
    if only != "ragged":
        us = bg._timed(m_grouped_fp8_gemm_nt_contiguous, (a, b, jnp.asarray(ids, jnp.int32)), ITERS)["us"]
        line(label, name, draw, "contiguous", us, flops, config(sum(padded), n, k, "contiguous", g), spread)
    if only == "contiguous":
        return
    a_valid = (a[0][:valid], a[1][:valid])
    us = bg._timed(fp8_grouped_gemm_nt, (a_valid, b, jnp.asarray(sizes, jnp.int32)), ITERS)["us"]
    line(label, name, draw, "ragged", us, flops, config(valid, n, k, "ragged", g), spread)
    if baseline:
        us = bg._baseline_us(bg._ragged_dot_bf16, (x[:valid], w, jnp.asarray(sizes, jnp.int32)), ITERS)
        line(label, name, draw, "ragged_dot", us, flops, "bf16")


def masked(label, name, g, expected, n, k, rng):
    """One masked row; a configuration the kernel refuses (a forced tile) prints its error and the rows go on."""
    try:
        masked_row(label, name, g, expected, n, k, rng)
    except Exception as e:  # noqa: BLE001 (a sweep of forced tiles reports what does not run)
        print(f"{label:8s} {name:15s} masked failed: {str(e).splitlines()[0][:150]}", flush=True)


def masked_row(label, name, g, expected, n, k, rng):
    max_m = max(128, -(-4 * expected // 128) * 128)
    masked_m = np.asarray([int(expected * rng.uniform(0.7, 1.3)) for _ in range(g)], np.int32)
    a = jax.jit(jax.vmap(per_token_cast_to_fp8))(bg._normal(3, (g, max_m, k)))
    b = jax.jit(jax.vmap(per_block_cast_to_fp8))(bg._normal(1, (g, n, k)))
    hint = int(1.2 * expected)
    us = bg._timed(lambda a, b, mm: m_grouped_fp8_gemm_nt_masked(a, b, mm, hint), (a, b, jnp.asarray(masked_m)),
                   ITERS)["us"]
    line(label, name, "table" if name in TABLE_MASKED else "decode", "masked", us, 2.0 * int(masked_m.sum()) * n * k,
         config(max_m, n, k, "masked", g, hint), f"  {g * n * k / us / 1e3:.0f} GB/s of weights")


def main(argv):
    label, rest = argv[0], argv[1:]
    baseline, with_masked = "--baseline" in rest, "--masked" in rest
    draws = ("even",) if "--even" in rest else ("even", "skewed")
    only = "contiguous" if "--contiguous-only" in rest else "ragged" if "--ragged-only" in rest else None
    names = [a for a in rest if not a.startswith("--")]
    for shape in [a for a in names if "=" in a]:  # ad-hoc layers: name=G,R,N,K
        LAYERS[shape.split("=")[0]] = tuple(int(v) for v in shape.split("=")[1].split(","))
    names = [a.split("=")[0] for a in names]
    for name, (g, rows, n, k) in LAYERS.items():
        if names and name not in names:
            continue
        for seed, draw in enumerate(draws):
            m_grouped(label, name, draw, g, rows, n, k, np.random.default_rng(seed), baseline, only)
    if with_masked:
        for name, (g, expected, n, k) in {**MASKED, **TABLE_MASKED}.items():
            if name in names or (not names and name in MASKED):
                masked(label, name, g, expected, n, k, np.random.default_rng(7))


if __name__ == "__main__":
    main(sys.argv[1:])
