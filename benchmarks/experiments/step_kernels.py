"""Where an FP8 training step's GPU time goes: the kernels of five back-to-back calls of the jitted step under the
profiler, summed per kernel name and divided by five, ours (jdg_*) apart from XLA's. Steps: `mlp` (two fp8_dot
layers, value_and_grad over the weights, as remat_step.py) and `moe` (nn.moe's layer, value_and_grad over its
weights, as the demo's) and `moe_ep` (the same, expert-parallel over every local device: all_to_all exchanges);
`moe_before`: `moe` as before NOTES 102 (the dispatch gathered into a copy, the combine weights applied after the
second GEMM), `moe_weights_after` (only the combine as before NOTES 103: the FFN's rows unsorted, then weighted and
summed); `moe_x`, `moe_x_before`, ...: the same with x differentiated too (the demo's backward); `moe_bf16`: the
weights stored in bf16 (the demo's), and `moe_bf16_wgrad_f32` as before NOTES 104 (their gradients written in
float32, then converted).

    python benchmarks/experiments/step_kernels.py [--sequence DIR] [mlp|moe|moe_ep|moe_before|moe_weights_after ...]

--sequence DIR: also lists one step's kernels in launch order (which GEMM is which) and writes each step's optimized
HLO (the fusions' contents) to DIR/<step>.hlo.txt.
"""

import collections
import sys
from functools import partial

import jax
import jax.numpy as jnp

import remat_step  # (this folder)
from jax_deepgemm import bench, nn


def mlp_step():
    loss, args = remat_step.mlp_problem()
    return jax.jit(jax.value_and_grad(loss, argnums=(0, 1))), args


def moe_step(expert_parallel=False, argnums=(0, 1, 2), weights_dtype=jnp.float32):
    tokens, d, f, e, top_k = 4096, 7168, 2048, 16, 4
    keys = jax.random.split(jax.random.key(1), 4)
    x = jax.random.normal(keys[0], (tokens, d), jnp.bfloat16)
    router = jax.random.normal(keys[1], (d, e), jnp.float32) * d**-0.5
    w_gate_up = (jax.random.normal(keys[2], (e, d, 2 * f), jnp.float32) * d**-0.5).astype(weights_dtype)
    w_down = (jax.random.normal(keys[3], (e, f, d), jnp.float32) * f**-0.5).astype(weights_dtype)

    mesh = jax.make_mesh((len(jax.devices()),), ("ep",)) if expert_parallel else None

    def loss(router, w_gate_up, w_down, x):
        y = nn.moe(x, router, w_gate_up, w_down, top_k=top_k, mesh=mesh, axis_name="ep" if mesh else None)
        return jnp.sum(y.astype(jnp.float32) ** 2)
    return jax.jit(jax.value_and_grad(loss, argnums=argnums)), (router, w_gate_up, w_down, x)


def moe_variant_step(argnums=(0, 1, 2), copied=False, weights_after=False, wgrad_f32=False,
                     weights_dtype=jnp.float32):
    """The MoE step as before NOTES 102's, 103's and 104's changes: `copied`, its dispatch gathered into a copy before
    the first expert GEMM; `weights_after`, the combine weights applied to the second GEMM's rows put back in (token,
    slot) order; `wgrad_f32`, the weight gradients written in float32 and converted to the weights' dtype after the
    kernel. Compiled here, the patches undone."""
    from jax_deepgemm import _permutation, differentiable
    from jax_deepgemm.differentiable import ragged_dot
    from jax_deepgemm.nn import experts
    moe_module = sys.modules["jax_deepgemm.nn.moe"]

    def copied_gemm(x, order, top_k, rhs, group_sizes):
        return ragged_dot(experts.dispatch(x, order, top_k), rhs, group_sizes, preferred_element_type=x.dtype)

    def ffn_then_weights(rows, w_gate_up, w_down, group_sizes, *, fp8, gather, combine):
        out = experts.expert_ffn(rows, w_gate_up, w_down, group_sizes, fp8=fp8, gather=gather)
        order, top_k = gather
        per_slot = experts.permute_rows(out, _permutation.inverse_permutation(order))
        per_slot = per_slot.reshape(rows.shape[0], top_k, out.shape[-1]).astype(jnp.float32)
        return jnp.sum(per_slot * combine[..., None], axis=1).astype(rows.dtype)
    saved = (experts.dispatched_ragged_dot, moe_module.expert_ffn, differentiable._wgrad_dtype)  # (read at trace time)
    if wgrad_f32:
        differentiable._wgrad_dtype = lambda dtype: jnp.dtype(jnp.float32)
    if copied:
        experts.dispatched_ragged_dot = copied_gemm
    if weights_after:
        moe_module.expert_ffn = ffn_then_weights
    try:
        step, args = moe_step(argnums=argnums, weights_dtype=weights_dtype)
        return step.lower(*args).compile(), args
    finally:
        experts.dispatched_ragged_dot, moe_module.expert_ffn, differentiable._wgrad_dtype = saved


if __name__ == "__main__":  # (moe_quantize_span.py imports the steps)
    steps = {"mlp": mlp_step, "moe": moe_step, "moe_ep": lambda: moe_step(True)}
    for x in ("", "_x"):  # (_x: x differentiated too)
        argnums = (0, 1, 2, 3) if x else (0, 1, 2)
        steps["moe" + x] = partial(moe_step, argnums=argnums)
        steps[f"moe{x}_before"] = partial(moe_variant_step, argnums, copied=True, weights_after=True)
        steps[f"moe{x}_weights_after"] = partial(moe_variant_step, argnums, weights_after=True)
        steps[f"moe{x}_bf16"] = partial(moe_step, argnums=argnums, weights_dtype=jnp.bfloat16)
        steps[f"moe{x}_bf16_wgrad_f32"] = partial(moe_variant_step, argnums, wgrad_f32=True, weights_dtype=jnp.bfloat16)
    names, sequence_dir = sys.argv[1:], None
    if names[:1] == ["--sequence"]:
        sequence_dir, names = names[1], names[2:]
    for name in names or ["mlp", "moe"]:
        step, args = steps[name]()
        compiled = step if hasattr(step, "as_text") else step.lower(*args).compile()
        memory = compiled.memory_analysis()  # (XLA's buffers of the step: what the backward keeps is temp)
        if memory is not None:
            print(f"{name}: XLA's temp buffers {memory.temp_size_in_bytes / 2**20:.0f} MiB, outputs "
                  f"{memory.output_size_in_bytes / 2**20:.0f} MiB")
        if sequence_dir:
            with open(f"{sequence_dir}/{name}.hlo.txt", "w") as f:
                f.write(compiled.as_text())
        for _ in range(3):
            jax.block_until_ready(step(*args))
        calls = 5
        events = bench._trace_kernels(lambda: [jax.block_until_ready(step(*args)) for _ in range(calls)])
        per_name = collections.Counter()
        for kernel, start, end in events:
            per_name[kernel] += (end - start) / 1e3 / calls
        ours = sum(us for k, us in per_name.items() if k.startswith("jdg_"))
        total = sum(per_name.values())
        span = (events[-1][2] - events[0][1]) / 1e3 / calls
        print(f"{name}: {total:.1f} us of kernels per step ({span:.1f} us span), ours {ours:.1f}, "
              f"XLA's {total - ours:.1f}")
        for kernel, us in per_name.most_common(25):
            print(f"  {us:9.1f} us  {kernel[:110]}")
        if sequence_dir:  # the last step's kernels (one step launches len(events) / calls of them)
            print(f"{name}: one step's kernels in launch order")
            for kernel, start, end in events[-(len(events) // calls):]:
                print(f"  {(end - start) / 1e3:9.1f} us  {kernel[:110]}")
