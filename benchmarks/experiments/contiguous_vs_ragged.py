"""Where the contiguous kernel loses to the ragged one on the same tokens (benchmarks/NOTES.md 63): both ops on
chosen group sizes, kernel time only. Sizes that are multiples of 256 give both the same tiles (no tile of the
contiguous grid holds two experts or padding rows); one group removes the experts altogether.

    python benchmarks/experiments/contiguous_vs_ragged.py N,K SIZE[,SIZE...] ...
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import (bench, fp8_grouped_gemm_nt, m_grouped_fp8_gemm_nt_contiguous, per_block_cast_to_fp8,
                          per_token_cast_to_fp8)

n, k = (int(v) for v in sys.argv[1].split(","))
for spec in sys.argv[2:]:
    rows = [int(v) for v in spec.split(",")]
    g, m = len(rows), sum(rows)
    padded = [-(-r // 128) * 128 for r in rows]
    ids = np.concatenate([np.r_[np.full(r, e), np.full(p - r, -1)] for e, (r, p) in enumerate(zip(rows, padded))])
    a = jax.jit(per_token_cast_to_fp8)(jax.random.normal(jax.random.key(0), (sum(padded), k), jnp.bfloat16))
    b = jax.jit(jax.vmap(per_block_cast_to_fp8))(jax.random.normal(jax.random.key(1), (g, n, k), jnp.bfloat16))
    contiguous = bench.profile(m_grouped_fp8_gemm_nt_contiguous, (a, b, jnp.asarray(ids, jnp.int32)), iters=20,
                               kernel_prefix="jdg_")["us"]
    ragged = bench.profile(fp8_grouped_gemm_nt, ((a[0][:m], a[1][:m]), b, jnp.asarray(rows, jnp.int32)), iters=20,
                           kernel_prefix="jdg_")["us"]
    print(f"{n} {k} sizes {spec}: contiguous {contiguous:8.1f} us  ragged {ragged:8.1f} us  "
          f"{(contiguous / ragged - 1) * 100:+.1f}%", flush=True)
