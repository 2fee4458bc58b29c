"""One call of the demo's MoE training step (step_kernels.py's moe_x_bf16: x differentiated, bf16 weights), for a
profiler run around this script (quantize_ncu.sh)."""

import jax
import jax.numpy as jnp

from step_kernels import moe_step  # (this folder)

step, args = moe_step(argnums=(0, 1, 2, 3), weights_dtype=jnp.bfloat16)
jax.block_until_ready(step(*args))
