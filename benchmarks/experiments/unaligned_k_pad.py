"""What a K that is not a multiple of 16 costs inside jit: fp8_gemm_nt pads A and B along K to 16-byte rows (TMA
strides) before its kernel. This lists each kernel of the jitted call (name, median us per call, L2 flushed), then
times the B operand's pad alone in three forms: jnp.pad on the FP8 array (kernels.py's first form), the same pad on the
rows viewed as the widest unsigned integers that divide K (8, 4 or 2 bytes; x64 on), bitcast back after, and
kernels._pad_k as it is now (views of at most 4 bytes).

    python benchmarks/experiments/unaligned_k_pad.py 4096,7000,7000 2048,4096,4000
"""

import sys

import jax
import jax.numpy as jnp

from jax_deepgemm import bench, fp8_gemm_nt, kernels, per_block_cast_to_fp8, per_token_cast_to_fp8


def pad_fp8(x):
    return jnp.pad(x, [(0, 0), (0, -x.shape[-1] % 16)])


def pad_wide(x):
    rows, k = x.shape
    width = next(w for w in (8, 4, 2, 1) if k % w == 0)
    if width == 1:
        return pad_fp8(x)
    wide = {8: jnp.uint64, 4: jnp.uint32, 2: jnp.uint16}[width]
    u8 = jax.lax.bitcast_convert_type(x, jnp.uint8).reshape(rows, k // width, width)
    padded = jnp.pad(jax.lax.bitcast_convert_type(u8, wide), [(0, 0), (0, (-k % 16) // width)])
    return jax.lax.bitcast_convert_type(jax.lax.bitcast_convert_type(padded, jnp.uint8).reshape(rows, -1), x.dtype)


jax.config.update("jax_enable_x64", True)  # uint64 views
for spec in sys.argv[1:]:
    m, n, k = (int(v) for v in spec.split(","))
    kx, kw = jax.random.split(jax.random.key(m * 7 + n * 3 + k))
    a = jax.jit(per_token_cast_to_fp8)(jax.random.normal(kx, (m, k), jnp.bfloat16))
    b = jax.jit(per_block_cast_to_fp8)(jax.random.normal(kw, (n, k), jnp.bfloat16))
    total = 0.0
    for name, us in bench.kernels_per_call(fp8_gemm_nt, (a, b)).items():
        total += us
        print(f"{m} {n} {k} call  {us:8.1f} us  {name[:100]}", flush=True)
    print(f"{m} {n} {k} call  {total:8.1f} us  (all kernels)", flush=True)
    assert bool(jnp.all(jax.jit(pad_wide)(b[0]).view(jnp.uint8) == jax.jit(pad_fp8)(b[0]).view(jnp.uint8)))
    mb = 2 * b[0].size / 1e6  # read and written, MB
    for fn in (pad_fp8, pad_wide, kernels._pad_k):
        for name, us in bench.kernels_per_call(fn, (b[0],)).items():
            print(f"{m} {n} {k} {fn.__name__:8s} {us:8.1f} us {mb / us:6.2f} TB/s  {name[:80]}", flush=True)
