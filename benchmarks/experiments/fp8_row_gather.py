"""The MoE layer's forward operand since NOTES 102: x [4096, 7168] bf16 quantized per token, then its FP8 rows and
scales gathered to the 16384 dispatched rows (x[order // 4]). GPU time per call of ways to write the gather, beside
the path before (gather the bf16 rows, then quantize them).

    python benchmarks/experiments/fp8_row_gather.py
"""

import collections

import jax
import jax.numpy as jnp

from jax_deepgemm import bench
from jax_deepgemm.quantization import per_token_cast_to_fp8

TOKENS, D, TOP_K = 4096, 7168, 4
x = jax.random.normal(jax.random.key(0), (TOKENS, D), jnp.bfloat16)
rows = jax.random.permutation(jax.random.key(1), TOKENS * TOP_K).astype(jnp.int32) // TOP_K


def as_words(data):  # FP8 rows as uint32 words: 4 bytes per gathered element
    return jax.lax.bitcast_convert_type(data.reshape(data.shape[0], -1, 4), jnp.uint32)


def from_words(words):
    return jax.lax.bitcast_convert_type(words, jnp.float8_e4m3fn).reshape(words.shape[0], -1)


WAYS = {
    "gather bf16 rows, then quantize (before)": lambda x, r: per_token_cast_to_fp8(x[r]),
    "quantize, gather FP8 rows (data[r])": lambda x, r: tuple(a[r] for a in per_token_cast_to_fp8(x)),
    "quantize, gather as uint32 words": lambda x, r: (lambda d, s: (from_words(as_words(d)[r]), s[r]))(
        *per_token_cast_to_fp8(x)),
    "quantize, take(mode=clip)": lambda x, r: tuple(jnp.take(a, r, axis=0, mode="clip")
                                                    for a in per_token_cast_to_fp8(x)),
    "quantize, promise_in_bounds": lambda x, r: tuple(a.at[r].get(mode="promise_in_bounds")
                                                      for a in per_token_cast_to_fp8(x)),
    "quantize only": lambda x, r: per_token_cast_to_fp8(x),
}

want = jax.jit(WAYS["gather bf16 rows, then quantize (before)"])(x, rows)
for name, way in WAYS.items():
    fn = jax.jit(way)
    got = fn(x, rows)
    same = name == "quantize only" or all(bool(jnp.array_equal(a.view(jnp.uint8) if a.dtype != jnp.float32 else a,
                                                                b.view(jnp.uint8) if b.dtype != jnp.float32 else b))
                                          for a, b in zip(got, want))
    for _ in range(2):
        jax.block_until_ready(fn(x, rows))
    calls = 10
    events = bench._trace_kernels(lambda: [jax.block_until_ready(fn(x, rows)) for _ in range(calls)])
    per_name = collections.Counter()
    for kernel, start, end in events:
        per_name[kernel] += (end - start) / 1e3 / calls
    seen = ", ".join(f"{k[:26]} {v:.0f}" for k, v in per_name.most_common(4))
    print(f"{name:42s} {sum(per_name.values()):7.1f} us  same={same}  ({seen})")
