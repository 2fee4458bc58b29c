"""Correctness of whatever dense kernel the environment selects (DG_TUNE_*, an experiment's #define): fp8_gemm_nt
against the pure-JAX reference on random data, the output filled with NaN bytes before each launch
(DG_POISON_OUTPUTS, so that an element the kernel does not write cannot pass); prints the relative difference per
shape and exits 1 when one is above 1e-3. Usage: python benchmarks/experiments/check_dense.py M,N,K ..."""

import os
import sys

os.environ.setdefault("DG_POISON_OUTPUTS", "1")  # read when a program is compiled: set before the first one

import jax
import jax.numpy as jnp

import jax_deepgemm as dg
from jax_deepgemm import reference
from jax_deepgemm.testing import calc_diff


def main():
    bad = 0
    for i, spec in enumerate(sys.argv[1:]):
        m, n, k = (int(v) for v in spec.split(","))
        ka, kb = jax.random.split(jax.random.key(i))
        a = dg.per_token_cast_to_fp8(jax.random.normal(ka, (m, k), jnp.bfloat16))
        b = dg.per_block_cast_to_fp8(jax.random.normal(kb, (n, k), jnp.bfloat16))
        got = jax.jit(dg.fp8_gemm_nt)(a, b)
        want = jax.jit(lambda a, b: reference.fp8_gemm_nt(*a, *b, out_dtype=jnp.bfloat16))(a, b)
        diff = float(calc_diff(got.astype(jnp.float32), want.astype(jnp.float32)))
        print(f"check {m}x{n}x{k}: diff {diff:.2e}", flush=True)
        bad += not diff <= 1e-3  # NaN (a poisoned element left unwritten) fails too
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
