"""The MoE layer's weighted SwiGLU forward with the FP8 operand the second expert GEMM takes of h (NOTES 132).

h = silu(gate) * up * w (float32 math, bf16 out) and h's per-token quantization. Forms:
  two_passes  swiglu (an XLA fusion writing h), then token_cast_to_fp8(h) (the rowwise kernel reading h back): the
              MoE layer's forward before NOTES 132
  fused       jax_deepgemm.swiglu.swiglu_fp8: h and its FP8 operand in one pass (one kernel on sm_90)
Each form's kernels per call (profiler, L2 flushed, two rounds), and its results against two_passes'.

    python benchmarks/experiments/swiglu_forward.py [M F [FORM ...]]
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import bench
from jax_deepgemm.swiglu import swiglu, swiglu_fp8
from jax_deepgemm.transposed_cast import token_cast_to_fp8

M, F = (int(v) for v in sys.argv[1:3]) if len(sys.argv) > 2 else (16384, 2048)


def two_passes(gate_up, w):
    h = swiglu(gate_up, w, gate_up.dtype)
    return h, token_cast_to_fp8(h)


FORMS = {"two_passes": two_passes, "fused": swiglu_fp8}
k1, k2 = jax.random.split(jax.random.key(0))
args = (jax.random.normal(k1, (M, 2 * F), jnp.bfloat16), jax.random.uniform(k2, (M,), jnp.float32, 0.1, 1.0))
want_h = np.asarray(jax.jit(two_passes)(*args)[0], np.float64)
for name in sys.argv[3:] or FORMS:
    fn = FORMS[name]
    h, (data, scale) = jax.jit(fn)(*args)
    diff = float(np.max(np.abs(np.asarray(h, np.float64) - want_h) / (np.abs(want_h) + 1e-3)))
    moved = args[0].nbytes + h.nbytes + data.nbytes + scale.nbytes  # bytes read and written once each
    times = [bench.profile(fn, args, iters=20, kernel_prefix=None, wall_rounds=0)["us"] for _ in range(2)]
    print(f"{name:10s} [{M}, {2 * F}] {times[0]:7.1f} / {times[1]:7.1f} us ({moved / times[0] / 1e3:.0f} GB/s)  "
          f"largest relative difference of h from two_passes' {diff:.1e}", flush=True)
