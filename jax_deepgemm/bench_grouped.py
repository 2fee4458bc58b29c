"""The grouped rows of `python -m jax_deepgemm bench`: the MoE GEMMs on DeepGEMM's grouped shapes (GPU.md), timed
like the dense rows (bench.profile: profiler kernel time, L2 flushed, median), with same-run bf16 baselines.

Inputs follow DeepGEMM's tests: per group [0.7, 1.3] x the nominal rows (contiguous: each run padded to 128 rows
with id -1; ragged: the same rows unpadded); masked: `masked_m` drawn in [0.7, 1.3] x expected M in [G, 4096, K]
buffers, expected_m hint 1.2 x expected; k-grouped: per group [0.7, 1.3] x the nominal K, rounded to 128.
TFLOPS count the valid rows (K columns) only. `"shape"` is [groups, rows per group, N, K] (masked: expected rows;
k-grouped: [groups, M, N, nominal K per group]); `"draw"` is what was drawn for the row, the rows per group
(contiguous and ragged: before padding; masked: `masked_m`) or the K per group (k-grouped). A row's time moves with
its draw by up to ~15% (how many row blocks each group fills, and so the rounds of tiles: benchmarks/NOTES.md
34, 152), so ratios between runs hold only on one draw.

Baselines (every kernel of their program): `jax.lax.ragged_dot` in bf16 on the same unpadded rows
(k-grouped: `ragged_dot_general` with K ragged), and a batched bf16 einsum over [G, rows, K] buffers as large as
the largest group (masked: the [G, 4096, K] buffers), what a JAX user writes without a grouped GEMM.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .bench import profile
from .grouped import (fp8_grouped_gemm_nt, k_grouped_fp8_gemm_nt_contiguous, m_grouped_fp8_gemm_nt_contiguous,
                      m_grouped_fp8_gemm_nt_masked)
from .quantization import per_block_cast_to_fp8, per_token_cast_to_fp8

M_GROUPED_SHAPES = [(4, 8192, 4096, 7168), (4, 8192, 7168, 2048), (8, 4096, 4096, 7168), (8, 4096, 7168, 2048)]
MASKED_SHAPES = [(g, e, n, k) for g, e in ((1, 1024), (2, 512), (4, 256)) for n, k in ((4096, 7168), (7168, 2048))]
K_GROUPED_SHAPES = [(4, 4096, 7168, 8192), (4, 7168, 2048, 8192), (8, 4096, 7168, 4096), (8, 7168, 2048, 4096)]
MASKED_MAX_M = 4096


def _normal(seed, shape):
    return jax.random.normal(jax.random.key(seed), shape, jnp.bfloat16)


def _timed(fn, args, iters):
    return profile(fn, args, iters=iters, kernel_prefix="jdg_")


def _baseline_us(fn, args, iters):  # the grouped rows report the baselines' kernel time only
    return round(profile(fn, args, iters=iters, kernel_prefix=None, wall_rounds=0)["us"], 2)


def _row(op, shape, draw, ours, flops, bytes_moved, baselines):
    return {"op": op, "shape": list(shape), "draw": [int(v) for v in draw], "kernel_us": round(ours["us"], 2),
            "tflops": round(flops / ours["us"] / 1e6, 1), "gbs": round(bytes_moved / ours["us"] / 1e3, 1),
            "jit_us": round(ours["wall_us"], 2), "baselines": baselines}


def _ragged_dot_bf16(x, w_gnk, sizes):
    return jax.lax.ragged_dot(x, jnp.swapaxes(w_gnk, 1, 2), sizes)


def _einsum_bf16(x_gmk, w_gnk):
    return jnp.einsum("gmk,gnk->gmn", x_gmk, w_gnk, preferred_element_type=jnp.bfloat16)


def m_grouped_rows(g, per_group, n, k, iters, rng) -> list[dict]:
    """Contiguous (padded to 128 per group) and ragged (unpadded) rows on the same token counts."""
    rows = [int(per_group * rng.uniform(0.7, 1.3)) for _ in range(g)]
    padded = [-(-r // 128) * 128 for r in rows]
    ids = np.concatenate([np.r_[np.full(r, e), np.full(p - r, -1)] for e, (r, p) in enumerate(zip(rows, padded))])
    valid = sum(rows)
    x = _normal(0, (sum(padded), k))
    w = _normal(1, (g, n, k))
    a = jax.jit(per_token_cast_to_fp8)(x)
    b = jax.jit(jax.vmap(per_block_cast_to_fp8))(w)
    flops = 2.0 * valid * n * k
    weight_bytes = g * n * k
    baselines = {
        "ragged_dot_bf16_us": _baseline_us(_ragged_dot_bf16, (x[:valid], w, jnp.asarray(rows, jnp.int32)), iters),
        "batched_einsum_bf16_us": _baseline_us(_einsum_bf16, (_normal(2, (g, max(rows), k)), w), iters),
    }
    contiguous = _timed(m_grouped_fp8_gemm_nt_contiguous, (a, b, jnp.asarray(ids, jnp.int32)), iters)
    a_valid = (a[0][:valid], a[1][:valid])  # ragged needs no padding; the first rows are real enough to time
    ragged = _timed(fp8_grouped_gemm_nt, (a_valid, b, jnp.asarray(rows, jnp.int32)), iters)
    shape = (g, per_group, n, k)
    return [_row("m_grouped_fp8_gemm_nt_contiguous", shape, rows, contiguous, flops,
                 sum(padded) * (k + 2 * n) + weight_bytes, baselines),
            _row("fp8_grouped_gemm_nt", shape, rows, ragged, flops, valid * (k + 2 * n) + weight_bytes, baselines)]


def masked_row(g, expected, n, k, iters, rng) -> dict:
    masked_m = np.asarray([int(expected * rng.uniform(0.7, 1.3)) for _ in range(g)], np.int32)
    x = _normal(3, (g, MASKED_MAX_M, k))
    w = _normal(1, (g, n, k))
    a = jax.jit(jax.vmap(per_token_cast_to_fp8))(x)
    b = jax.jit(jax.vmap(per_block_cast_to_fp8))(w)
    hint = int(1.2 * expected)
    ours = _timed(lambda a, b, mm: m_grouped_fp8_gemm_nt_masked(a, b, mm, hint), (a, b, jnp.asarray(masked_m)), iters)
    valid = int(masked_m.sum())
    sizes = np.ravel([[r, MASKED_MAX_M - r] for r in masked_m])  # valid rows, then the rest of the buffer
    baselines = {
        # ragged_dot over the valid rows only (the rest of each buffer goes to a zero weight group)
        "ragged_dot_bf16_us": _baseline_us(
            _ragged_dot_bf16, (x.reshape(-1, k), jnp.stack([w, jnp.zeros_like(w)], 1).reshape(2 * g, n, k),
                               jnp.asarray(sizes, jnp.int32)), iters),
        "batched_einsum_bf16_us": _baseline_us(_einsum_bf16, (x, w), iters),
    }
    return _row("m_grouped_fp8_gemm_nt_masked", (g, expected, n, k), masked_m, ours, 2.0 * valid * n * k,
                valid * (k + 2 * n) + g * n * k, baselines)


def k_grouped_row(g, m, n, k_nominal, iters, rng, with_c=True, out_dtype=jnp.float32) -> dict:
    sizes = np.asarray([-(-int(k_nominal * rng.uniform(0.7, 1.3)) // 128) * 128 for _ in range(g)], np.int32)
    k = int(sizes.sum())
    x = _normal(4, (m, k))
    y = _normal(5, (n, k))
    a, b = jax.jit(per_token_cast_to_fp8)(x), jax.jit(per_token_cast_to_fp8)(y)
    c = jnp.zeros((g, m, n), jnp.float32) if with_c else None  # without: for experiments (C's share of the time)
    ours = _timed(lambda a, b, s, c: k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c, out_dtype=out_dtype),
                  (a, b, jnp.asarray(sizes), c), iters)
    dims = jax.lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(([1], [1]), ([], [])),
                                             lhs_ragged_dimensions=[1], rhs_group_dimensions=[])
    kmax = int(sizes.max())
    baselines = {
        "ragged_dot_bf16_us": _baseline_us(lambda x, y, s: jax.lax.ragged_dot_general(x, y, s, dims),
                                           (x, y, jnp.asarray(sizes)), iters),
        "batched_einsum_bf16_us": _baseline_us(
            lambda xs, ys: jnp.einsum("gmk,gnk->gmn", xs, ys, preferred_element_type=jnp.float32),
            (_normal(6, (g, m, kmax)), _normal(7, (g, n, kmax))), iters),
    }
    return _row("k_grouped_fp8_gemm_nt_contiguous", (g, m, n, k_nominal), sizes, ours, 2.0 * m * n * k,
                (m + n) * k + (4 * with_c + jnp.dtype(out_dtype).itemsize) * g * m * n, baselines)


GROUPED_KINDS = ("contiguous", "masked", "k-grouped")  # contiguous rows come with their ragged twins


def grouped_rows(iters: int, report, kinds=GROUPED_KINDS) -> list[dict]:
    """The grouped rows of `kinds`; `report(row)` prints each as it comes. A kind left out still draws its random
    sizes, so every row sees the same inputs whichever kinds run."""
    rng = np.random.default_rng(0)
    out = []

    def run(kind, make, shape):
        if kind not in kinds:
            rng.uniform(0.7, 1.3, size=shape[0])  # the group sizes its row would have drawn
            return
        for row in make(*shape, iters, rng):
            report(row)
            out.append(row)

    for shape in M_GROUPED_SHAPES:
        run("contiguous", m_grouped_rows, shape)
    for shape in MASKED_SHAPES:
        run("masked", lambda *a: [masked_row(*a)], shape)
    for shape in K_GROUPED_SHAPES:
        run("k-grouped", lambda *a: [k_grouped_row(*a)], shape)
    return out
