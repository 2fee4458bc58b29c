"""Contiguous and ragged GEMMs on chosen group sizes, one line each: for telling what the contiguous kernel's fixed
grid costs where 256-row tiles straddle an expert boundary from what it costs everywhere (NOTES 137).

    python benchmarks/experiments/contiguous_straddle.py N K SIZES [SIZES ...]   # SIZES: rows per group, "8192,8192"

Contiguous takes each group padded to 128 rows (ids -1 in the padding), ragged the same rows unpadded, as the
benchmark draws them; the same operands for every SIZES of one total. Settings (DG_TUNE_*) apply to the whole process.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import fp8_grouped_gemm_nt, m_grouped_fp8_gemm_nt_contiguous, per_block_cast_to_fp8
from jax_deepgemm import per_token_cast_to_fp8
from jax_deepgemm.bench_grouped import _normal, _timed


def straddles(padded, block_m=256):
    """Expert boundaries inside a block_m-row tile of the fixed grid (each such tile takes two passes)."""
    ends = np.cumsum(padded)[:-1]
    return int(np.count_nonzero(ends % block_m))


def main():
    n, k = int(sys.argv[1]), int(sys.argv[2])
    w = jax.jit(jax.vmap(per_block_cast_to_fp8))
    for spec in sys.argv[3:]:
        rows = [int(v) for v in spec.split(",")]
        padded = [-(-r // 128) * 128 for r in rows]
        ids = np.concatenate([np.r_[np.full(r, e), np.full(p - r, -1)] for e, (r, p) in enumerate(zip(rows, padded))])
        a = jax.jit(per_token_cast_to_fp8)(_normal(0, (sum(padded), k)))
        b = w(_normal(1, (len(rows), n, k)))
        contiguous = _timed(m_grouped_fp8_gemm_nt_contiguous, (a, b, jnp.asarray(ids, jnp.int32)), 20)["us"]
        valid = sum(rows)
        ragged = _timed(fp8_grouped_gemm_nt, ((a[0][:valid], a[1][:valid]), b, jnp.asarray(rows, jnp.int32)), 20)["us"]
        flops = 2.0 * valid * n * k
        print(f"{spec:32s} N {n} K {k} straddles {straddles(padded)}  contiguous {contiguous:8.1f} us "
              f"{flops / contiguous / 1e6:7.1f} TFLOPS  ragged {ragged:8.1f} us {flops / ragged / 1e6:7.1f} TFLOPS  "
              f"ragged / contiguous {ragged / contiguous:.3f}", flush=True)


if __name__ == "__main__":
    main()
