"""The demo: an FP8 MoE layer (router top-k, ragged grouped GEMMs for gate/up and down with SwiGLU, then a dense
projection), forward and backward, compared with the same layer in float32 (and bf16 for context) and timed.
With several devices, the same layer expert-parallel over them too: its agreement with one device and its timings.

Small shapes on the CPU reference; DeepSeek-like shapes when an sm_90 GPU runs the kernels.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

from . import nn, runtime
from .differentiable import fp8_dot
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
        "router": jax.random.normal(k_router, (d, e), jnp.float32) * d**-0.5,
        "gate_up": (jax.random.normal(k_up, (e, d, 2 * f), jnp.float32) * d**-0.5).astype(dtype),
        "down": (jax.random.normal(k_down, (e, f, d), jnp.float32) * f**-0.5).astype(dtype),
        "out": (jax.random.normal(k_out, (d, d), jnp.float32) * d**-0.5).astype(dtype),
    }


def moe_layer(params: dict, x: jax.Array, *, top_k: int, fp8: bool, mesh=None) -> jax.Array:
    """x [T, D] -> [T, D]. fp8=True uses jax_deepgemm's FP8 ops, fp8=False the same math with lax in x.dtype.
    With a mesh, the MoE part runs expert-parallel over its axis "ep"."""
    dense = fp8_dot if fp8 else (lambda a, w: a @ w)
    mixed = nn.moe(x, params["router"], params["gate_up"], params["down"], top_k=top_k, fp8=fp8, mesh=mesh,
                   axis_name=None if mesh is None else "ep")
    if mesh is not None:
        # The projection's FP8 weight gradient quantizes 128-token blocks: with all tokens on every device it
        # quantizes the single-device layer's blocks, so the two layers can be compared to rounding.
        mixed = jax.lax.with_sharding_constraint(mixed, NamedSharding(mesh, P()))
    return dense(mixed, params["out"])


def _time(fn, *args, repeats: int) -> float:
    jax.block_until_ready(fn(*args))  # compile + warm up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        samples.append(time.perf_counter() - start)
    return float(np.median(samples))


def _on_gpu() -> bool:
    return any(runtime.is_sm90(d) for d in runtime.cuda_devices())


def run(shape: MoEShape | None = None, *, repeats: int | None = None, seed: int = 0) -> dict:
    on_gpu = _on_gpu()
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
        results[f"{name}_diff"] = _diffs(y, g, gx, y32, g32, gx32)
    results["expert_parallel"] = _expert_parallel(shape, params, x, outputs["fp8"], repeats)
    return results


def _diffs(y, g, gx, y_ref, g_ref, gx_ref) -> dict:
    return {"output": calc_diff(y, y_ref), "grad_x": calc_diff(gx, gx_ref),
            **{f"grad_{w}": calc_diff(g[w], g_ref[w]) for w in ("gate_up", "down", "out")}}


def _expert_parallel(shape: MoEShape, params: dict, x: jax.Array, one_device, repeats: int) -> dict | None:
    """The FP8 layer expert-parallel over the most devices that split both the experts and the tokens evenly
    (None with one device): its timings, and calc_diff against the single-device FP8 layer. Both do the same FP8
    math on the same rows; they differ only where XLA fuses differently and skips or keeps a bf16 rounding of an
    intermediate, which the next FP8 quantization can magnify to ~1e-4, far below the FP8 error itself."""
    devices = jax.devices()
    n = max(d for d in range(1, len(devices) + 1) if shape.experts % d == 0 and shape.tokens % d == 0)
    if n < 2:
        return None
    mesh = jax.make_mesh((n,), ("ep",), axis_types=(AxisType.Auto,), devices=devices[:n])
    # Operands already where the layer wants them: tokens split over the devices, each device its experts.
    params = {k: (nn.shard_experts(v, mesh, "ep") if k in ("gate_up", "down")
                  else jax.device_put(v, NamedSharding(mesh, P()))) for k, v in params.items()}
    x = jax.device_put(x, NamedSharding(mesh, P("ep")))

    def loss(params, x):
        y = moe_layer(params, x, top_k=shape.top_k, fp8=True, mesh=mesh)
        return jnp.mean(jnp.square(y.astype(jnp.float32))), y

    forward = jax.jit(lambda p, x: loss(p, x)[1])
    backward = jax.jit(jax.grad(lambda p, x: loss(p, x)[0], argnums=(0, 1)))
    y, (g, gx) = forward(params, x), backward(params, x)
    y1, (g1, gx1) = one_device
    return {"devices": n, "diff": _diffs(y, g, gx, y1, g1, gx1),
            "forward_ms": 1e3 * _time(forward, params, x, repeats=repeats),
            "forward_backward_ms": 1e3 * _time(backward, params, x, repeats=repeats)}


def main(argv=None) -> int:
    on_gpu = _on_gpu()
    shape = GPU_SHAPE if on_gpu else CPU_SHAPE
    # Said first: compiling the FP8, bf16 and float32 layers (and their kernels) takes a minute or two on a GPU.
    print(f"FP8 MoE layer demo on {jax.default_backend()} ({jax.devices()[0].device_kind}); "
          f"kernels: {'Hopper FP8 kernels' if on_gpu and runtime.use_kernels() else 'pure-JAX reference'}")
    print(f"  tokens={shape.tokens} hidden={shape.hidden} intermediate={shape.intermediate} "
          f"experts={shape.experts} top_k={shape.top_k}", flush=True)
    results = run(shape)
    print("  accuracy vs the same layer in float32 (calc_diff = 1 - 2<x,y>/(|x|^2+|y|^2), lower is better):")
    print(f"    {'':<14} {'fp8':>9} {'bf16':>9}")
    for key in results["fp8_diff"]:
        print(f"    {key:<14} {results['fp8_diff'][key]:9.2e} {results['bf16_diff'][key]:9.2e}")
    print("  timings (median, jitted, ms):")
    for name in ("fp8", "bf16"):
        print(f"    {name:<5} forward {results[f'{name}_forward_ms']:9.3f}   "
              f"forward+backward {results[f'{name}_forward_backward_ms']:9.3f}")
    if results["expert_parallel"] is not None:
        print("\n".join(expert_parallel_lines(results["expert_parallel"])))
    return 0


def expert_parallel_lines(ep: dict) -> list[str]:
    return [f"  expert-parallel FP8 layer over {ep['devices']} devices (jax_deepgemm.nn.moe with a mesh: tokens and "
            "experts split, all_to_all exchange):",
            "    calc_diff vs the single-device FP8 layer: "
            + "  ".join(f"{key} {value:.2e}" for key, value in ep["diff"].items()),
            f"    ep-fp8 forward {ep['forward_ms']:9.3f}   forward+backward {ep['forward_backward_ms']:9.3f}"]
