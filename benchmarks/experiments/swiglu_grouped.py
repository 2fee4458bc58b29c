"""The MoE layer's SwiGLU backward with both FP8 operands of d(gate_up) (benchmarks/NOTES.md 127; needs
swiglu_grouped.patch applied: the grouped kernel was not taken). Forms:
  two_kernels  swiglu_backward (d(gate_up) in bf16, its rowwise FP8, dw), then transposed_cast_to_fp8 of d(gate_up)
               through the groups' block map (the MoE step before NOTES 127)
  grouped      swiglu_backward_grouped: the same FP8 operands and dw from one kernel, no d(gate_up) written
Each form's kernels per call (profiler, L2 flushed), two rounds; then the two forms' FP8 results compared bit for bit.

    python benchmarks/experiments/swiglu_grouped.py [M F G]      (PROFILE_ONCE=1: one call of each form, no timing)
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import bench
from jax_deepgemm.swiglu import swiglu_backward, swiglu_backward_grouped
from jax_deepgemm.transposed_cast import group_block_map, transposed_cast_to_fp8

M, F, G = (int(v) for v in sys.argv[1:4]) if len(sys.argv) > 3 else (16384, 2048, 16)


def time_us(fn, args, iters=20):
    """Median kernel time per call after an L2 flush (bench.profile's method; the flush negates its buffer, since
    the forms' own XLA fusions may share the name of bench's additive flush)."""
    jitted, buf = jax.jit(fn), [jnp.zeros((bench.flush_bytes // 4096, 1024), jnp.float32)]
    flip = jax.jit(jnp.negative, donate_argnums=0)

    def flush():
        buf[0] = flip(buf[0])
        jax.block_until_ready(buf[0])

    def calls():
        for _ in range(iters):
            flush()
            jax.block_until_ready(jitted(*args))

    for _ in range(3):
        flush()
        jax.block_until_ready(jitted(*args))
    flush_names = {name for name, _, _ in bench._trace_kernels(flush)}
    return float(np.median(bench.per_call_us(bench._trace_kernels(calls), flush_names, None, iters)))


def two_kernels(gate_up, dh, w, sizes):
    d_gate_up, rowwise, dw = swiglu_backward(gate_up, dh, w)
    return rowwise, transposed_cast_to_fp8(d_gate_up, block_map=group_block_map(sizes, M)[:2]), dw


def grouped(gate_up, dh, w, sizes):
    return swiglu_backward_grouped(gate_up, dh, w, sizes)


k1, k2, k3, k4 = jax.random.split(jax.random.key(0), 4)
# MoE-like groups: M rows over G experts, sizes drawn around M / G
weights = jax.random.uniform(k4, (G,), jnp.float32, 0.5, 1.5)
sizes = np.floor(np.asarray(weights / weights.sum()) * M).astype(np.int32)
sizes[-1] += M - sizes.sum()
args = (jax.random.normal(k1, (M, 2 * F), jnp.bfloat16), jax.random.normal(k3, (M, F), jnp.bfloat16),
        jax.random.uniform(k2, (M,), jnp.float32, 0.1, 1.0), jnp.asarray(sizes))
print(f"M {M}, F {F}, groups {sizes.tolist()}")
if os.environ.get("PROFILE_ONCE"):  # one call of each form, for a profiler run around this script
    for fn in (two_kernels, grouped):
        jax.block_until_ready(jax.jit(fn)(*args))
    sys.exit(0)
results = {}
for name, fn in (("two_kernels", two_kernels), ("grouped", grouped)):
    results[name] = jax.jit(fn)(*args)
    times = [time_us(fn, args) for _ in range(2)]
    print(f"{name:12s} {times[0]:7.1f} / {times[1]:7.1f} us", flush=True)
a, b = (jax.tree.leaves(results[n]) for n in ("two_kernels", "grouped"))
for i, (x, y) in enumerate(zip(a[:4], b[:4])):
    bits = jnp.uint8 if x.dtype.itemsize == 1 else jnp.uint32
    same = np.array_equal(np.asarray(x.view(bits)), np.asarray(y.view(bits)))
    print(f"FP8 result {i} {x.dtype}{list(x.shape)}: {'identical' if same else 'DIFFERENT'}")
print(f"dw largest relative difference {float(jnp.max(jnp.abs(a[4] - b[4]) / (jnp.abs(a[4]) + 1e-3))):.1e}")
