"""A digest of fp8_gemm_nt's and the contiguous and masked grouped GEMMs' outputs on fixed random data, one line per
shape: for checking that a rewrite of the kernels' code that must not change arithmetic (ffma_reuse_patch.py) leaves
every bit of the results as it was. Run it once per kernel cache (DG_JIT_CACHE_DIR) and compare the lines.

    python benchmarks/experiments/output_digest.py 4096,7168,16384 ... [contiguous=G,M,N,K ...] [masked=G,E,N,K ...]

(masked=G,E,N,K: G groups of MASKED_MAX_M rows, masked_m drawn in [0.7, 1.3] x E with a seed of the shape, expected_m
1.2 x E as the benchmark's; only the rows under the mask are digested: the others are left untouched by contract.)
"""

import hashlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import (fp8_gemm_nt, m_grouped_fp8_gemm_nt_contiguous, m_grouped_fp8_gemm_nt_masked,
                          per_block_cast_to_fp8, per_token_cast_to_fp8)
from jax_deepgemm.bench_grouped import MASKED_MAX_M


def operands(m, n, k, groups=None):
    kx, kw = jax.random.split(jax.random.key(m * 7 + n * 3 + k))
    a = per_token_cast_to_fp8(jax.random.normal(kx, (m, k), jnp.bfloat16))
    if groups is None:
        return a, per_block_cast_to_fp8(jax.random.normal(kw, (n, k), jnp.bfloat16))
    return a, jax.vmap(per_block_cast_to_fp8)(jax.random.normal(kw, (groups, n, k), jnp.bfloat16))


for spec in sys.argv[1:]:
    if spec.startswith("contiguous="):
        g, m, n, k = (int(v) for v in spec.split("=")[1].split(","))
        a, b = operands(g * m, n, k, g)
        m_indices = jnp.repeat(jnp.arange(g, dtype=jnp.int32), m)
        out = m_grouped_fp8_gemm_nt_contiguous(a, b, m_indices)
    elif spec.startswith("masked="):
        g, e, n, k = (int(v) for v in spec.split("=")[1].split(","))
        a, b = operands(g * MASKED_MAX_M, n, k, g)
        a = (a[0].reshape(g, MASKED_MAX_M, k), a[1].reshape(g, MASKED_MAX_M, -1))
        masked_m = np.random.default_rng(g * e + n + k).uniform(0.7, 1.3, g) * e
        out = m_grouped_fp8_gemm_nt_masked(a, b, jnp.asarray(masked_m, jnp.int32), int(1.2 * e))
        out = jnp.concatenate([out[i, :int(masked_m[i])] for i in range(g)])
    else:
        m, n, k = (int(v) for v in spec.split(","))
        out = fp8_gemm_nt(*operands(m, n, k))
    data = np.asarray(jax.device_get(out).view(jnp.uint16))
    finite = bool(np.isfinite(np.asarray(out, np.float32)).all())
    print(f"{spec:32s} {hashlib.sha256(data.tobytes()).hexdigest()[:16]}  all finite: {finite}")
