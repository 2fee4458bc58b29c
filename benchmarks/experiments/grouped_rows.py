"""The grouped benchmark's rows of our kernels only (no baselines), one line each: for same-run comparisons of
DG_TUNE_* settings, which must be set before this process starts.

    DG_TUNE_CLUSTER=2 python benchmarks/experiments/grouped_rows.py [masked|contiguous|k_grouped|k_grouped_no_c ...]
    python benchmarks/experiments/grouped_rows.py contiguous=1,1024,2048,2048 ...   # other shapes: G,M,N,K
    python benchmarks/experiments/grouped_rows.py masked=16,32,4096,7168 ...        # G,expected M,N,K
    python benchmarks/experiments/grouped_rows.py k_grouped_no_c=16,7168,4096,1024 ... # G,M,N,K per group

(k_grouped_no_c: the k-grouped rows without C, i.e. without its loads in the epilogue; contiguous=...: the
contiguous and ragged rows of that shape, groups drawn as the table draws them; masked=..., k_grouped=...,
k_grouped_no_c=..., k_grouped_bf16=... (without C, bf16 out): that row.)
Each line ends with the jit loop's wall time per call (jit_us: every kernel of the program, ours and any other).
"""

import sys

import jax.numpy as jnp
import numpy as np

from jax_deepgemm import bench_grouped as bg

bg._baseline_us = lambda fn, args, iters: 0.0  # the bf16 baselines take most of the table's time: not needed here

kinds = sys.argv[1:] or ["masked", "contiguous", "k_grouped"]
rng = np.random.default_rng(0)
rows = []
if "contiguous" in kinds:
    for shape in bg.M_GROUPED_SHAPES:
        rows += bg.m_grouped_rows(*shape, 20, rng)
for kind in kinds:
    if kind.startswith("contiguous="):
        rows += bg.m_grouped_rows(*(int(v) for v in kind.split("=")[1].split(",")), 20, rng)
    elif kind.startswith("masked="):
        rows.append(bg.masked_row(*(int(v) for v in kind.split("=")[1].split(",")), 20, rng))
    elif kind.startswith(("k_grouped=", "k_grouped_no_c=", "k_grouped_bf16=")):
        name, shape = kind.split("=")
        rows.append(bg.k_grouped_row(*(int(v) for v in shape.split(",")), 20, rng, with_c=name == "k_grouped",
                                     out_dtype=jnp.bfloat16 if name == "k_grouped_bf16" else jnp.float32))
if "masked" in kinds:
    rows += [bg.masked_row(*shape, 20, rng) for shape in bg.MASKED_SHAPES]
if "k_grouped" in kinds or "k_grouped_no_c" in kinds:
    with_c = "k_grouped" in kinds
    rows += [bg.k_grouped_row(*shape, 20, rng, with_c=with_c) for shape in bg.K_GROUPED_SHAPES]
for r in rows:
    print(f"{r['op']:34s} {str(r['shape']):24s} {r['kernel_us']:9.1f} us {r['tflops']:7.1f} TFLOPS {r['gbs']:7.0f} GB/s"
          f"  jit {r['jit_us']:9.1f}", flush=True)
