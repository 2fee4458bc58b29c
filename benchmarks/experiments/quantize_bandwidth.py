"""How fast HBM moves the transposing quantization's bytes on this GPU: XLA's plain element-wise kernels over the
demo's bf16 weight w_gate_up [16, 7168, 4096] as ceilings for the kernel's read / write mix (NOTES 123), each
kernel's GB/s (bytes read + written per second of GPU time):
- read only (max |x|), read 2 bytes / write 1 (a cast to float8), read 2 / write 2 (x * 2), read 2 / write 2 in
  two outputs of 1 byte (two casts, the kernel's both-layouts mix);
and, with `one`, a single call of the kernel's both-layouts cast of that weight, for Nsight Compute.

    python benchmarks/experiments/quantize_bandwidth.py [one]
"""

import collections
import sys

import jax
import jax.numpy as jnp

from jax_deepgemm import bench
from jax_deepgemm.transposed_cast import transposed_cast_to_fp8

SHAPE = (16, 7168, 4096)
F8 = jnp.float8_e4m3fn
x = jax.random.normal(jax.random.key(0), SHAPE, jnp.bfloat16)

if sys.argv[1:] == ["one"]:
    fn = jax.jit(lambda x: transposed_cast_to_fp8(x, per_block=True, untransposed=True))
    jax.block_until_ready(fn(x))
    jax.block_until_ready(fn(x))
    sys.exit()

CEILINGS = {
    "read only: max |x|": lambda x: jnp.max(jnp.abs(x)),
    "read 2 / write 1: x as float8": lambda x: x.astype(F8),
    "read 2 / write 2: x * 2": lambda x: x * 2,
    "read 2 / write 1 + 1: x and -x as float8": lambda x: (x.astype(F8), (-x).astype(F8)),
}
for name, fn in CEILINGS.items():
    fn = jax.jit(fn)
    out = jax.eval_shape(fn, x)
    moved = x.size * 2 + sum(o.size * o.dtype.itemsize for o in jax.tree.leaves(out))
    for _ in range(2):
        jax.block_until_ready(fn(x))
    events = bench._trace_kernels(lambda: [jax.block_until_ready(fn(x)) for _ in range(10)])
    per_name = collections.Counter()
    for kernel, start, end in events:
        per_name[kernel] += (end - start) / 1e3 / 10
    us = sum(per_name.values())
    kernels = ", ".join(f"{k[:24]} {v:.0f}" for k, v in per_name.most_common(3))
    print(f"{name:44s} {us:8.1f} us ({moved / us / 1e3:6.0f} GB/s)   {kernels}")
