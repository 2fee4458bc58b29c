"""One call each of four quantization kernels, for Nsight Compute's DRAM and L2 byte counts (NOTES 123): do the
per-column scales of the token-major casts (a 4-byte store per column and CTA, [cols, row blocks] apart) cost DRAM
read-modify-writes that the 128x128 weight casts (one scale per CTA) do not?

    ncu -k regex:jdg_fp8_quantize --metrics dram__bytes_read.sum,dram__bytes_write.sum,... \
        python benchmarks/experiments/quantize_dram.py
"""

import jax
import jax.numpy as jnp

from jax_deepgemm.transposed_cast import group_block_map, token_cast_to_fp8, transposed_cast_to_fp8

TOKENS = 16384
GROUPS = jnp.full((16,), TOKENS // 16, jnp.int32) + jnp.arange(16, dtype=jnp.int32) * 7 - 52  # as transposed_cast.py
key = jax.random.key(0)
CASES = [  # name, x's shape, the cast
    ("w [16, 7168, 4096] bf16, 128x128", (16, 7168, 4096), lambda x: transposed_cast_to_fp8(x, per_block=True)),
    ("x [16384, 7168] bf16, groups", (TOKENS, 7168),
     lambda x: transposed_cast_to_fp8(x, per_block=False, block_map=group_block_map(GROUPS, TOKENS)[:2])),
    ("x [8192, 7168] bf16, dense", (8192, 7168), lambda x: transposed_cast_to_fp8(x, per_block=False)),
    ("x [8192, 7168] bf16, per token", (8192, 7168), token_cast_to_fp8),
]
for name, shape, cast in CASES:
    x = jax.random.normal(key, shape, jnp.bfloat16)
    print(name, flush=True)
    jax.block_until_ready(jax.jit(cast)(x))
