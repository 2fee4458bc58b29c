"""Runs one op on one shape a few times, for a profiler wrapped around it (ncu, nsys, compute-sanitizer):

    ncu -k regex:jdg_ -c 1 --section SpeedOfLight python tools/profile_one.py dense 4096,7168,16384
    python tools/profile_one.py k_grouped 4,4096,7168,8192      # G, M, N, K per group
"""

import sys

import jax
import jax.numpy as jnp

import jax_deepgemm as dg


def operands(op, shape):
    key = iter(jax.random.split(jax.random.key(0), 4))
    normal = lambda s: jax.random.normal(next(key), s, jnp.bfloat16)  # noqa: E731
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
        fn = lambda a, b, s: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s)  # noqa: E731
        return fn, (dg.per_token_cast_to_fp8(normal((m, g * k))), dg.per_token_cast_to_fp8(normal((n, g * k))), sizes)
    raise SystemExit(f"unknown op {op!r}: dense, dense_per_row, k_grouped")


def main():
    op, shape = sys.argv[1], tuple(int(v) for v in sys.argv[2].split(","))
    fn, args = operands(op, shape)
    fn = jax.jit(fn)
    for _ in range(3):
        jax.block_until_ready(fn(*args))
    print(f"{op} {shape}: ran 3 times")


if __name__ == "__main__":
    main()
