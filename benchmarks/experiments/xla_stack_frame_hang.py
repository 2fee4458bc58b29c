"""A compile that never ends (NOTES 166): XLA's CallInliner loops in StackFrames::IsPrefix (seen with gdb) on the
gradient of ragged_dot under an Explicit mesh axis when the forward was traced first in the process, the package's
own frames are in the programs' locations, and the Python stack has one particular depth. Each case runs in its own
process (8 CPU devices, no GPU needed) with a time limit, in three settings: the package's frames left out of the
locations (as it registers them since NOTES 166), put back in (as before; through JAX's private list), and no
frames at all (jax_include_full_tracebacks_in_locations off).

    python benchmarks/experiments/xla_stack_frame_hang.py [LIMIT_S]

Prints one line per case: the stack depth added around the call, the setting, and the compile time or HANG."""

from __future__ import annotations

import os
import subprocess
import sys

CASE = """
import os, sys, time
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
import jax_deepgemm as dg
jax.config.update("jax_num_cpu_devices", 8)
jax.config.update("jax_include_full_tracebacks_in_locations", sys.argv[2] != "no frames")
if sys.argv[2] == "ours included":
    from jax._src import source_info_util
    source_info_util._exclude_paths.remove(os.path.dirname(os.path.abspath(dg.__file__)))
    source_info_util.is_user_filename.cache_clear()
sizes = np.asarray([5, 0, 30, 3, 7, 0, 9, 60], np.int32)
fn = lambda lhs, rhs: dg.ragged_dot(lhs, rhs, jnp.asarray(sizes))
for _ in range(int(sys.argv[1])):  # one more Python frame between the caller and the op each time
    fn = (lambda f: lambda lhs, rhs: f(lhs, rhs))(fn)
grad = jax.grad(lambda x, w: jnp.sum(fn(x, w) ** 2), argnums=(0, 1))
cpus = jax.devices("cpu")
with jax.default_device(cpus[0]):
    x = jax.random.normal(jax.random.key(0), (128, 256))
    w = jax.random.normal(jax.random.key(1), (8, 256, 64))
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,), devices=cpus)
    with jax.set_mesh(mesh):
        x = jax.device_put(x, NamedSharding(mesh, P("x")))
        jax.jit(fn)(x, w)  # the forward first: the gradient's trace reuses its inner jit's cached jaxpr
        start = time.perf_counter()
        jax.jit(grad)(x, w)
print(f"{time.perf_counter() - start:.2f} s")
"""


def main(limit: float) -> None:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    for setting in ("ours excluded", "ours included", "no frames"):
        for depth in range(5):
            try:
                run = subprocess.run([sys.executable, "-c", CASE, str(depth), setting], capture_output=True,
                                     text=True, timeout=limit, env=env)
                result = run.stdout.strip() or f"error: {run.stderr.strip().splitlines()[-1:]}"
            except subprocess.TimeoutExpired:
                result = f"HANG (> {limit:g} s)"
            print(f"depth +{depth}  frames in locations: {setting:13s}  gradient compile: {result}", flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
