"""Runs one op on one shape a few times, for a profiler wrapped around it (ncu, nsys, compute-sanitizer):

    ncu -k regex:jdg_ -c 1 --section SpeedOfLight python tools/profile_one.py dense 4096,7168,16384
    python tools/profile_one.py k_grouped 4,4096,7168,8192      # G, M, N, K per group; with an f32 C, as benchmarked
    python tools/profile_one.py contiguous 4,8192,4096,7168     # G, M per group, N, K
    python tools/profile_one.py contiguous_padded 16,500,3072,4096  # G, rows per group (each padded to 128), N, K
    python tools/profile_one.py ragged 16,500,3072,4096         # the same tokens as ragged groups
    python tools/profile_one.py masked 1,4096,7168,2048,952,1024  # G, max M, N, K, masked_m (every group), expected_m

Environment: JDG_PROFILE_RUNS (launches, default 3), JDG_PROFILE_SMS (fewer persistent CTAs: set_num_sms),
JDG_PROFILE_DATA=const (every input element 1 instead of random normal values), JDG_PROFILE_NO_C=1 (k_grouped
without C: the benchmark passes one, and its loads were most of what the C-less profile missed, NOTES 36).
"""

import os
import sys

import jax
import jax.numpy as jnp

import jax_deepgemm as dg


def operands(op, shape):
    key = iter(jax.random.split(jax.random.key(0), 4))
    normal = lambda s: jax.random.normal(next(key), s, jnp.bfloat16)  # noqa: E731
    if os.environ.get("JDG_PROFILE_DATA") == "const":  # every element 1: does the kernel's speed depend on the data?
        normal = lambda s: jnp.ones(s, jnp.bfloat16)  # noqa: E731
    if op == "dense":
        m, n, k = shape
        return dg.fp8_gemm_nt, (dg.per_token_cast_to_fp8(normal((m, k))), dg.per_block_cast_to_fp8(normal((n, k))))
    if op == "dense_per_row":
        m, n, k = shape
        fn = lambda a, b: dg.fp8_gemm_nt(a, b, out_dtype=jnp.float32)  # noqa: E731
        return fn, (dg.per_token_cast_to_fp8(normal((m, k))), dg.per_token_cast_to_fp8(normal((n, k))))
    if op == "k_grouped":
        g, m, n, k = shape
        sizes = jnp.full((g,), k, jnp.int32)
        c = None if os.environ.get("JDG_PROFILE_NO_C") == "1" else jnp.zeros((g, m, n), jnp.float32)
        fn = lambda a, b, s, c: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c)  # noqa: E731
        a, b = dg.per_token_cast_to_fp8(normal((m, g * k))), dg.per_token_cast_to_fp8(normal((n, g * k)))
        return fn, (a, b, sizes, c)
    if op == "contiguous":
        g, m, n, k = shape  # m rows per group, the groups one after the other
        ids = jnp.repeat(jnp.arange(g, dtype=jnp.int32), m)
        b = jax.vmap(dg.per_block_cast_to_fp8)(normal((g, n, k)))
        return dg.m_grouped_fp8_gemm_nt_contiguous, (dg.per_token_cast_to_fp8(normal((g * m, k))), b, ids)
    if op in ("contiguous_padded", "ragged"):  # G groups of `rows` rows: contiguous pads each to 128 with -1 ids
        g, rows, n, k = shape
        padded = -(-rows // 128) * 128
        b = jax.vmap(dg.per_block_cast_to_fp8)(normal((g, n, k)))
        if op == "ragged":
            return dg.fp8_grouped_gemm_nt, (dg.per_token_cast_to_fp8(normal((g * rows, k))), b,
                                            jnp.full((g,), rows, jnp.int32))
        ids = jnp.where(jnp.arange(padded)[None, :] < rows, jnp.arange(g, dtype=jnp.int32)[:, None], -1).reshape(-1)
        return dg.m_grouped_fp8_gemm_nt_contiguous, (dg.per_token_cast_to_fp8(normal((g * padded, k))), b, ids)
    if op == "masked":
        g, m, n, k, rows, expected_m = shape
        fn = lambda a, b, masked_m: dg.m_grouped_fp8_gemm_nt_masked(a, b, masked_m, expected_m)  # noqa: E731
        a = jax.vmap(dg.per_token_cast_to_fp8)(normal((g, m, k)))
        b = jax.vmap(dg.per_block_cast_to_fp8)(normal((g, n, k)))
        return fn, (a, b, jnp.full((g,), rows, jnp.int32))
    raise SystemExit(f"unknown op {op!r}: dense, dense_per_row, k_grouped, contiguous, contiguous_padded, ragged, "
                     "masked")


def main():
    op, shape = sys.argv[1], tuple(int(v) for v in sys.argv[2].split(","))
    fn, args = operands(op, shape)
    if "JDG_PROFILE_SMS" in os.environ:  # fewer persistent CTAs: how the K loop scales with the SMs that load
        dg.set_num_sms(int(os.environ["JDG_PROFILE_SMS"]))
    fn = jax.jit(fn)
    runs = int(os.environ.get("JDG_PROFILE_RUNS", "3"))  # more runs: the last ones see a warm (throttled) GPU
    for _ in range(runs):
        jax.block_until_ready(fn(*args))
    print(f"{op} {shape}: ran {runs} times")


if __name__ == "__main__":
    main()
