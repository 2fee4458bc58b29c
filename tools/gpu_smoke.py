"""A handful of small kernel launches, one per path, each checked and reported on its own: a quick first look at a
kernel change on the GPU machine (run it under compute-sanitizer to locate a fault)."""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import jax_deepgemm as dg


def check(name, fn, *args, ref):
    try:
        out = np.asarray(jax.block_until_ready(fn(*args)), np.float64)
        err = np.abs(out - np.asarray(ref, np.float64)).max() / (np.abs(np.asarray(ref, np.float64)).max() + 1e-30)
        print(f"{name:<28} max rel err {err:.2e}", flush=True)
    except Exception as e:  # noqa: BLE001 (report and go on: which paths fail is the point)
        print(f"{name:<28} FAILED: {str(e)[:300]}", flush=True)


def main():
    k = jax.random.split(jax.random.key(0), 4)
    x = jax.random.normal(k[0], (256, 512))
    w = jax.random.normal(k[1], (384, 512))
    a, b_blk, b_row = dg.per_token_cast_to_fp8(x), dg.per_block_cast_to_fp8(w), dg.per_token_cast_to_fp8(w)
    ref = dg.dequantize(a) @ dg.dequantize(b_blk).T
    ref_row = dg.dequantize(a) @ dg.dequantize(b_row).T
    which = sys.argv[1:] or ["dense", "per_row", "k_grouped", "ragged"]
    if "dense" in which:
        check("dense 128x128 B scales", jax.jit(dg.fp8_gemm_nt), a, b_blk, ref=ref)
    if "per_row" in which:
        check("dense per-row B scales", jax.jit(lambda a, b: dg.fp8_gemm_nt(a, b, out_dtype=jnp.float32)), a, b_row,
              ref=ref_row)
    if "k_grouped" in which:
        sizes = jnp.asarray([256, 256], jnp.int32)
        kg = jax.jit(dg.k_grouped_fp8_gemm_nt_contiguous)(a, b_row, sizes)
        ref_kg = np.stack([np.asarray(dg.dequantize(a))[:, s:s + 256] @ np.asarray(dg.dequantize(b_row))[:, s:s + 256].T
                           for s in (0, 256)])
        check("k_grouped", lambda: kg, ref=ref_kg)
    if "ragged" in which:
        bg = jax.vmap(dg.per_block_cast_to_fp8)(w.reshape(1, 384, 512))
        check("ragged", jax.jit(dg.fp8_grouped_gemm_nt), a, bg, jnp.asarray([256], jnp.int32), ref=ref)


if __name__ == "__main__":
    main()
