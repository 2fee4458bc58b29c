"""The transposed operands' quantization of the MoE layer's training step (the demo's: 4096 tokens x 7168, 16 experts
of 2048, top 4) and of a dense MLP's weight gradient: GPU time per call of `transposed_cast_to_fp8` with the kernel
against the same call lowered to the XLA fusions (JAX_DEEPGEMM_DISABLE_KERNELS at lowering), and the kernel's
bytes moved (x read once, data and scales written) per second. "both layouts": untransposed=True (NOTES 101);
"through the gather": the MoE layer's x [4096, 7168] read as its 16384 dispatched rows (row_index, NOTES 102).
"per token": `token_cast_to_fp8`, x's own 1x128 quantization (the GEMMs' A operands), against per_token_cast_to_fp8's
fusions.

    python benchmarks/experiments/transposed_cast.py [f32|bf16|all] [--no-xla]   (the cases of that input dtype;
                                                                                  without XLA's times)
"""

import collections
import os
import sys

import jax
import jax.numpy as jnp

from jax_deepgemm import bench
from jax_deepgemm.transposed_cast import group_block_map, token_cast_to_fp8, transposed_cast_to_fp8

TOKENS = 4096 * 4
# Uneven groups; their sum, 16392, is cut at the 16384 rows (the last group loses 8).
GROUPS = jnp.full((16,), TOKENS // 16, jnp.int32) + jnp.arange(16, dtype=jnp.int32) * 7 - 52
# name, shape, dtype, per_block (None: per token), grouped, untransposed, gathered (rows x[ORDER // 4])
CASES = [
    ("w_gate_up [16, 7168, 4096] f32, 128x128", (16, 7168, 4096), jnp.float32, True, False, False, False),
    ("w_down [16, 2048, 7168] f32, 128x128", (16, 2048, 7168), jnp.float32, True, False, False, False),
    ("w_down [16, 2048, 7168] f32, both layouts", (16, 2048, 7168), jnp.float32, True, False, True, False),
    ("w [7168, 2048] bf16, both layouts", (7168, 2048), jnp.bfloat16, True, False, True, False),
    ("w_gate_up [16, 7168, 4096] bf16, both layouts", (16, 7168, 4096), jnp.bfloat16, True, False, True, False),
    ("w_gate_up [16, 7168, 4096] bf16, 128x128", (16, 7168, 4096), jnp.bfloat16, True, False, False, False),
    ("w_down [16, 2048, 7168] bf16, both layouts", (16, 2048, 7168), jnp.bfloat16, True, False, True, False),
    ("x [16384, 7168] bf16, groups", (TOKENS, 7168), jnp.bfloat16, False, True, False, False),
    ("x [4096, 7168] bf16 through the gather, groups", (TOKENS // 4, 7168), jnp.bfloat16, False, True, False, True),
    ("grad_gate_up [16384, 4096] bf16, groups", (TOKENS, 4096), jnp.bfloat16, False, True, False, False),
    ("h [16384, 2048] bf16, groups", (TOKENS, 2048), jnp.bfloat16, False, True, False, False),
    ("x [8192, 7168] bf16, dense", (8192, 7168), jnp.bfloat16, False, False, False, False),
    ("x [8192, 7168] bf16, per token", (8192, 7168), jnp.bfloat16, None, False, False, False),
    ("x [8192, 7168] f32, per token", (8192, 7168), jnp.float32, None, False, False, False),
    ("grad [8192, 2048] bf16, per token", (8192, 2048), jnp.bfloat16, None, False, False, False),
    ("x [4096, 7168] bf16, per token", (TOKENS // 4, 7168), jnp.bfloat16, None, False, False, False),
    ("h [16384, 2048] bf16, per token", (TOKENS, 2048), jnp.bfloat16, None, False, False, False),
    ("grad_gate_up [16384, 4096] bf16, per token", (TOKENS, 4096), jnp.bfloat16, None, False, False, False),
    ("x [4096, 7168] bf16 through the gather, per token", (TOKENS // 4, 7168), jnp.bfloat16, None, False, False, True),
]
ORDER = jax.random.permutation(jax.random.key(1), TOKENS).astype(jnp.int32)  # the dispatch's (token, slot) pairs


def gpu_us(fn, args, calls=10):
    for _ in range(2):
        jax.block_until_ready(fn(*args))
    events = bench._trace_kernels(lambda: [jax.block_until_ready(fn(*args)) for _ in range(calls)])
    per_name = collections.Counter()
    for name, start, end in events:
        per_name[name] += (end - start) / 1e3 / calls
    return sum(per_name.values()), per_name


for name, shape, dtype, per_block, grouped, untransposed, gathered in CASES:
    if len(sys.argv) > 1 and sys.argv[1] not in (name, "all") and sys.argv[1] not in name:
        continue
    x = jax.random.normal(jax.random.key(0), shape, dtype)
    maps = group_block_map(GROUPS, TOKENS if gathered else shape[0])[:2] if grouped else ()
    rows = ORDER // 4 if gathered else None
    def cast(x, *m):
        if per_block is None:
            return token_cast_to_fp8(x, row_index=rows)
        return transposed_cast_to_fp8(x, per_block=per_block, block_map=m or None, untransposed=untransposed,
                                      row_index=rows)
    out = jax.eval_shape(cast, x, *maps)
    read = (TOKENS * shape[-1] if gathered else x.size) * x.dtype.itemsize  # (a gather reads x's rows 4 times)
    moved = read + sum(o.size * o.dtype.itemsize for o in out)
    times = {}
    for kernels in ("1",) if "--no-xla" in sys.argv else ("1", "0"):
        os.environ["JAX_DEEPGEMM_DISABLE_KERNELS"] = "0" if kernels == "1" else "1"
        fn = jax.jit(lambda x, *m: cast(x, *m))  # (a new function: lowered again with the flag)
        times[kernels] = gpu_us(fn, (x, *maps))
    us = times["1"][0]
    line = f"{name:48s} kernel {us:8.1f} us ({moved / us / 1e3:6.0f} GB/s)"
    if "0" in times:
        kernels_seen = ", ".join(f"{k[:28]} {v:.0f}" for k, v in times["0"][1].most_common(4))
        line += f"   XLA {times['0'][0]:8.1f} us ({kernels_seen})"
    print(line)
