"""The MoE dispatch's sort of the (token, slot) pairs by expert (nn.experts.sort_by_expert; NOTES 132): its forms.

The MoE step's stable argsort of 16384 expert ids ran as six XLA sort kernels, ~49 us per step on an H200 (session
86). Forms, each giving the same order (checked against argsort's):
  argsort       jnp.argsort(ids, stable=True): a two-key sort (the ids, then their positions)
  sort_key_val  lax.sort_key_val(ids, positions, is_stable=True): one key
  packed        jnp.sort(ids * n + positions) % n: one int32 operand (for E * n < 2^31)
  counting      a counting sort: each pair's place = its expert's start + its rank among its expert's pairs before
                it (a cumulative sum of the one-hot ids), then one scatter of the positions
  package       nn.experts.sort_by_expert: the counting sort with ranks counted in blocks of 128 (no [N, E] array)
Each form's kernels per call (profiler, L2 flushed, two rounds) and their names.

    python benchmarks/experiments/expert_sort.py [N E [FORM ...]]   (forms before `package`: session 86's 03_)
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import bench
from jax_deepgemm.nn import experts

N, E = (int(v) for v in sys.argv[1:3]) if len(sys.argv) > 2 else (16384, 16)


def argsort(ids):
    return jnp.argsort(ids, stable=True)


def sort_key_val(ids):
    return jax.lax.sort_key_val(ids, jnp.arange(ids.shape[0], dtype=jnp.int32), is_stable=True)[1]


def packed(ids):
    n = ids.shape[0]
    return jnp.sort(ids * n + jnp.arange(n, dtype=jnp.int32)) % n


def counting(ids):
    n = ids.shape[0]
    onehot = (ids[:, None] == jnp.arange(E, dtype=ids.dtype)).astype(jnp.int32)
    counts = jnp.sum(onehot, axis=0)
    rank = jnp.sum((jnp.cumsum(onehot, axis=0) - onehot) * onehot, axis=1)  # pairs of the same expert before it
    place = (jnp.cumsum(counts) - counts)[ids] + rank
    return jnp.zeros((n,), jnp.int32).at[place].set(jnp.arange(n, dtype=jnp.int32), unique_indices=True)


def package(ids):
    return experts.sort_by_expert(ids, E)[0]


FORMS = {"argsort": argsort, "sort_key_val": sort_key_val, "packed": packed, "counting": counting, "package": package}
ids = jax.random.randint(jax.random.key(0), (N,), 0, E, jnp.int32)
want = np.asarray(jax.jit(argsort)(ids))
for name in sys.argv[3:] or FORMS:
    fn = FORMS[name]
    same = bool((np.asarray(jax.jit(fn)(ids)) == want).all())
    times = [bench.profile(fn, (ids,), iters=20, kernel_prefix=None, wall_rounds=0)["us"] for _ in range(2)]
    _, events = bench.trace_flushed_calls(jax.jit(fn), (ids,), 1)
    kernels = sorted({k for k, _, _ in events})
    print(f"{name:12s} [{N}] E={E}: {times[0]:6.1f} / {times[1]:6.1f} us, same order as argsort: {same}; kernels "
          f"(with the flush's): {', '.join(k[:40] for k in kernels)}", flush=True)
