"""What a group's mostly empty last tile costs the ragged kernel (benchmarks/NOTES.md 124).

One static shape per (N, K) (M = 16384 rows, G = 16 groups: the MoE step's, so that every variant runs the same
kernel configuration); only the device group sizes change:
  aligned     16 x 1024: 64 full 256-row tiles per N block, no tail;
  swapped     8 x (1280, 768): the same 64 full tiles, other boundaries (control);
  tail1       8 x (1025, 1023): 8 one-row tail tiles more (1023's last tile holds 255 rows);
  tail64      8 x (1088, 960): 8 one-wave tails (960's last tile holds 192 rows);
  tail128     8 x (1152, 896): 8 two-wave tails (896's last tile holds 128 rows: 16 half tiles);
  draw        a multinomial draw of 16384 rows over 16 groups (what a uniform router gives).
A tail tile that cost nothing would leave tail1 at aligned's time; one that cost a full tile would add 8 / 64 of it.

    python benchmarks/experiments/ragged_tail_cost.py [N,K ...]      (FLUSH_BY=read: bench's read flush, not its write)
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import bench, fp8_grouped_gemm_nt, per_block_cast_to_fp8, per_token_cast_to_fp8

M, G = 16384, 16
bench.flush_by = os.environ.get("FLUSH_BY", bench.flush_by)
VARIANTS = {
    "aligned": [1024] * 16,
    "swapped": [1280, 768] * 8,
    "tail1": [1025, 1023] * 8,
    "tail64": [1088, 960] * 8,
    "tail128": [1152, 896] * 8,
    "draw": np.random.default_rng(0).multinomial(M, [1 / G] * G).tolist(),
}

for spec in sys.argv[1:] or ["4096,7168", "7168,2048"]:
    n, k = (int(v) for v in spec.split(","))
    a = jax.jit(per_token_cast_to_fp8)(jax.random.normal(jax.random.key(0), (M, k), jnp.bfloat16))
    b = jax.jit(jax.vmap(per_block_cast_to_fp8))(jax.random.normal(jax.random.key(1), (G, n, k), jnp.bfloat16))
    base = None
    for round_ in range(2):
        for name, sizes in VARIANTS.items():
            assert sum(sizes) <= M, name
            us = bench.profile(fp8_grouped_gemm_nt, (a, b, jnp.asarray(sizes, jnp.int32)), iters=20,
                               kernel_prefix="jdg_", wall_rounds=0)["us"]
            base = us if name == "aligned" else base
            tails = sum(1 for s in sizes if s % 256)
            print(f"round {round_} N={n} K={k} {name:8s} {us:8.1f} us  {(us / base - 1) * 100:+6.1f}% vs aligned  "
                  f"(groups with a partial last tile: {tails}; sizes {min(sizes)}-{max(sizes)})", flush=True)
