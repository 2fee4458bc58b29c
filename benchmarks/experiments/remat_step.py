"""A two-layer FP8 MLP's loss and weight gradients (value_and_grad: the loss is used, so the forward pass cannot be
left out) under jax.checkpoint, per policy: JAX's dots_saveable (which does not see our GEMMs, so they would run
again in the backward pass), dg.fp8_dots_saveable, nothing_saveable, and no checkpoint. Wall time per call of the
jitted step (median of five loops, bench.wall_us_per_call), two rounds, and our kernels' calls in its optimized
program.

    python benchmarks/experiments/remat_step.py [TOKENS D F]
"""

import sys

import jax
import jax.numpy as jnp

import jax_deepgemm as dg
from jax_deepgemm import bench

def mlp_problem(tokens: int = 8192, d: int = 7168, f: int = 2048):
    """The MLP's loss(w1, w2, x) and its arguments (also step_kernels.py's `mlp`)."""
    kx, k1, k2 = jax.random.split(jax.random.key(0), 3)
    x = jax.random.normal(kx, (tokens, d), jnp.bfloat16)
    w1 = jax.random.normal(k1, (d, f), jnp.float32) * d**-0.5
    w2 = jax.random.normal(k2, (f, d), jnp.float32) * f**-0.5

    def loss(w1, w2, x):
        return jnp.sum(dg.fp8_dot(jax.nn.gelu(dg.fp8_dot(x, w1)), w2).astype(jnp.float32) ** 2)
    return loss, (w1, w2, x)


def kernel_calls(fn, *args) -> int:
    """Our kernels' custom calls in the optimized program, after XLA's dead-code and common-subexpression passes
    (0 where the reference runs)."""
    return jax.jit(fn).lower(*args).compile().as_text().count('custom_call_target="jdg_fp8_gemm"')


def main():
    sizes = [int(v) for v in sys.argv[1:4]] if len(sys.argv) > 3 else [8192, 7168, 2048]
    loss, args = mlp_problem(*sizes)
    policies = {"none (no checkpoint)": None, "jax dots_saveable": jax.checkpoint_policies.dots_saveable,
                "dg.fp8_dots_saveable": dg.fp8_dots_saveable,
                "nothing_saveable": jax.checkpoint_policies.nothing_saveable}
    steps = {name: jax.value_and_grad(loss if policy is None else jax.checkpoint(loss, policy=policy), argnums=(0, 1))
             for name, policy in policies.items()}
    label = " x ".join(str(v) for v in sizes)
    for _ in range(2):  # the policies alternate
        for name, fn in steps.items():
            us = bench.wall_us_per_call(jax.jit(fn), args, iters=20, rounds=5)
            print(f"{label}  {name:22s} {kernel_calls(fn, *args)} kernel calls  {us:9.1f} us per step", flush=True)


if __name__ == "__main__":
    main()
