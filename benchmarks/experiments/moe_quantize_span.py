"""The MoE layer's training step (step_kernels.py's `moe`) with the library's quantizations of transposed operands
through the transposing quantization kernel (`transposed_cast_to_fp8`) and, for comparison, through the reference's
XLA fusions (its lowering told that the program is sharded, where the kernel never runs), each in a fresh process,
with XLA's memory preallocation on and off: kernel time per step, the span from the first kernel's start to the last
one's end, and the widest gaps between kernels with the kernels around them (NOTES 100: with the kernel the span had
grown from 10.5 to 91-119 ms per step, in runs that also differed in preallocation; NOTES 101: it was the
preallocation, and ragged_dot took the kernel).

    python benchmarks/experiments/moe_quantize_span.py
"""

import os
import subprocess
import sys

CHILD = r"""
import collections, sys
import jax
import step_kernels as steps
from jax_deepgemm import bench, transposed_cast

if sys.argv[1] == "xla":
    transposed_cast._sharded_program = lambda ctx: True  # (read at lowering: the reference's fusions)
step, args = steps.moe_step()
for _ in range(3):
    jax.block_until_ready(step(*args))
calls = 5
events = bench._trace_kernels(lambda: [jax.block_until_ready(step(*args)) for _ in range(calls)])
busy = sum(end - start for _, start, end in events) / 1e3 / calls
span = (events[-1][2] - events[0][1]) / 1e3 / calls
quantize = sum(end - start for name, start, end in events if "quantize" in name) / 1e3 / calls
gaps, last_end, last_name = [], events[0][2], events[0][0]
for name, start, end in events[1:]:
    if start > last_end:
        gaps.append(((start - last_end) / 1e3, last_name, name))
    if end > last_end:
        last_end, last_name = end, name
print(f"{sys.argv[1]:6s} preallocate={sys.argv[2]}: {busy:8.1f} us of kernels per step, span {span:9.1f} us, "
      f"quantize kernel {quantize:7.1f} us")
for us, before, after in sorted(gaps, reverse=True)[:5]:
    print(f"    gap {us:9.1f} us after {before[:50]} before {after[:50]}")
"""

here = os.path.dirname(os.path.abspath(__file__))
for prealloc in ("true", "false"):
    for mode in ("xla", "kernel"):
        env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE=prealloc, PYTHONPATH=here)
        out = subprocess.run([sys.executable, "-c", CHILD, mode, prealloc], env=env, capture_output=True, text=True,
                             timeout=300)
        print(out.stdout.strip() or out.stderr[-2000:], flush=True)
