"""The demo: an FP8 MoE layer (router top-k, ragged grouped GEMMs for gate/up and down with SwiGLU, then a dense
projection), forward and backward, compared with the same layer in float32 (and bf16 for context) and timed.

Small shapes on the CPU reference; DeepSeek-like shapes when an sm_90 GPU runs the kernels.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from . import runtime
from .differentiable import fp8_dot, ragged_dot
from .testing import calc_diff


@dataclass(frozen=True)
class MoEShape:
    tokens: int
    hidden: int
    intermediate: int
    experts: int
    top_k: int


CPU_SHAPE = MoEShape(tokens=256, hidden=512, intermediate=256, experts=8, top_k=2)
GPU_SHAPE = MoEShape(tokens=4096, hidden=7168, intermediate=2048, experts=16, top_k=4)


def init_params(shape: MoEShape, key, dtype=jnp.bfloat16) -> dict:
    k_router, k_up, k_down, k_out = jax.random.split(key, 4)
    d, f, e = shape.hidden, shape.intermediate, shape.experts
    return {
        "router": jax.random.normal(k_router, (d, e), jnp.float32) / np.sqrt(d),
        "gate_up": (jax.random.normal(k_up, (e, d, 2 * f), jnp.float32) / np.sqrt(d)).astype(dtype),
        "down": (jax.random.normal(k_down, (e, f, d), jnp.float32) / np.sqrt(f)).astype(dtype),
        "out": (jax.random.normal(k_out, (d, d), jnp.float32) / np.sqrt(d)).astype(dtype),
    }


def moe_layer(params: dict, x: jax.Array, *, top_k: int, fp8: bool) -> jax.Array:
    """x [T, D] -> [T, D]. fp8=True uses jax_deepgemm's FP8 ops, fp8=False the same math with lax in x.dtype."""
    grouped = ragged_dot if fp8 else jax.lax.ragged_dot
    dense = fp8_dot if fp8 else (lambda a, w: a @ w)
    tokens, experts = x.shape[0], params["router"].shape[1]
    logits = x.astype(jnp.float32) @ params["router"]
    weights, expert_ids = jax.lax.top_k(jax.nn.softmax(logits, axis=-1), top_k)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    # Dispatch: (token, slot) pairs sorted by expert, so each expert owns a contiguous run of rows.
    flat_expert = expert_ids.reshape(-1)
    order = jnp.argsort(flat_expert, stable=True)
    rows = x[order // top_k]
    group_sizes = jnp.bincount(flat_expert, length=experts).astype(jnp.int32)
    hidden = grouped(rows, params["gate_up"], group_sizes)
    gate, up = jnp.split(hidden, 2, axis=-1)
    expert_out = grouped(jax.nn.silu(gate) * up, params["down"], group_sizes)
    # Combine: back to (token, slot) order, weighted sum over the top-k slots.
    combined = jnp.zeros_like(expert_out).at[order].set(expert_out).reshape(tokens, top_k, -1)
    mixed = (combined.astype(jnp.float32) * weights[..., None]).sum(axis=1).astype(x.dtype)
    return dense(mixed, params["out"])


def _time(fn, *args, repeats: int) -> float:
    jax.block_until_ready(fn(*args))  # compile + warm up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        samples.append(time.perf_counter() - start)
    return float(np.median(samples))


def run(shape: MoEShape | None = None, *, repeats: int | None = None, seed: int = 0) -> dict:
    on_gpu = any(runtime.is_sm90(d) for d in runtime.cuda_devices())
    shape = shape or (GPU_SHAPE if on_gpu else CPU_SHAPE)
    repeats = repeats or (20 if on_gpu else 3)
    key_params, key_x = jax.random.split(jax.random.key(seed))
    params = init_params(shape, key_params)
    x = jax.random.normal(key_x, (shape.tokens, shape.hidden), jnp.float32).astype(jnp.bfloat16)

    def loss(params, x, fp8):
        y = moe_layer(params, x, top_k=shape.top_k, fp8=fp8)
        return jnp.mean(jnp.square(y.astype(jnp.float32))), y

    results = {"backend": jax.default_backend(), "device": str(jax.devices()[0].device_kind),
               "kernels": on_gpu and runtime.use_kernels(), "shape": shape}
    outputs = {}
    for name, fp8 in (("fp8", True), ("bf16", False)):
        forward = jax.jit(lambda p, x, fp8=fp8: loss(p, x, fp8)[1])
        backward = jax.jit(jax.grad(lambda p, x, fp8=fp8: loss(p, x, fp8)[0], argnums=(0, 1)))
        outputs[name] = (forward(params, x), backward(params, x))
        results[f"{name}_forward_ms"] = 1e3 * _time(forward, params, x, repeats=repeats)
        results[f"{name}_forward_backward_ms"] = 1e3 * _time(backward, params, x, repeats=repeats)
    # The yardstick: the same layer in float32 on the same (bf16-valued) parameters and input.
    params32 = jax.tree.map(lambda p: p.astype(jnp.float32), params)
    x32 = x.astype(jnp.float32)
    with jax.default_matmul_precision("highest"):
        outputs["f32"] = (jax.jit(lambda p, x: loss(p, x, False)[1])(params32, x32),
                          jax.jit(jax.grad(lambda p, x: loss(p, x, False)[0], argnums=(0, 1)))(params32, x32))
    y32, (g32, gx32) = outputs["f32"]
    for name in ("fp8", "bf16"):
        y, (g, gx) = outputs[name]
        results[f"{name}_diff"] = {"output": calc_diff(y, y32), "grad_x": calc_diff(gx, gx32),
                                   **{f"grad_{w}": calc_diff(g[w], g32[w]) for w in ("gate_up", "down", "out")}}
    return results


def main(argv=None) -> int:
    results = run()
    shape = results["shape"]
    print(f"FP8 MoE layer demo on {results['backend']} ({results['device']}); "
          f"kernels: {'Hopper FP8 kernels' if results['kernels'] else 'pure-JAX reference'}")
    print(f"  tokens={shape.tokens} hidden={shape.hidden} intermediate={shape.intermediate} "
          f"experts={shape.experts} top_k={shape.top_k}")
    print("  accuracy vs the same layer in float32 (calc_diff = 1 - 2<x,y>/(|x|^2+|y|^2), lower is better):")
    print(f"    {'':<14} {'fp8':>9} {'bf16':>9}")
    for key in results["fp8_diff"]:
        print(f"    {key:<14} {results['fp8_diff'][key]:9.2e} {results['bf16_diff'][key]:9.2e}")
    print("  timings (median, jitted, ms):")
    for name in ("fp8", "bf16"):
        print(f"    {name:<5} forward {results[f'{name}_forward_ms']:9.3f}   "
              f"forward+backward {results[f'{name}_forward_backward_ms']:9.3f}")
    return 0
