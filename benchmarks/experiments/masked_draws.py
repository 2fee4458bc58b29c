"""Masked GEMM kernel times over several masked_m draws per shape (the kernel's tile count depends on them; the
host's configuration only on expected_m), for comparing DG_TUNE_* settings set before this process starts:

    DG_TUNE_BLOCK_N=192 python benchmarks/experiments/masked_draws.py [DRAWS [GxExNxK ...]]

(GxExNxK: shapes to run instead of SHAPES, e.g. 8x256x4096x7168.)

JDG_NUM_SMS=S runs them on S SMs (set_num_sms); JDG_SHAPES=i,j,... only those of SHAPES; JDG_EXACT=1 takes
masked_m = expected in every group (one draw of whole 128-row blocks; an even count per group where expected >= 256);
JDG_MASKED_M=r0,r1,... that one draw (labelled "given", e.g. the benchmark table's) instead of the random ones.

One line per (shape, draw): the masked_m drawn as the benchmark draws them (uniform in [0.7, 1.3] x expected, seed =
the draw), the M blocks of 128 rows they make, the kernel time and the tile the model picks.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax_deepgemm import _C
from jax_deepgemm import bench_grouped as bg
from jax_deepgemm import (get_num_sms, m_grouped_fp8_gemm_nt_masked, per_block_cast_to_fp8, per_token_cast_to_fp8,
                          set_num_sms)

SHAPES = bg.MASKED_SHAPES + [(8, 128, 4096, 7168), (8, 128, 7168, 2048), (16, 64, 4096, 7168)]
draws = int(sys.argv[1]) if len(sys.argv) > 1 else 6
if len(sys.argv) > 2:
    SHAPES = [tuple(int(x) for x in shape.split("x")) for shape in sys.argv[2:]]
if "JDG_NUM_SMS" in os.environ:
    set_num_sms(int(os.environ["JDG_NUM_SMS"]))
if "JDG_SHAPES" in os.environ:
    SHAPES = [SHAPES[int(i)] for i in os.environ["JDG_SHAPES"].split(",")]
for g, expected, n, k in SHAPES:
    a = jax.jit(jax.vmap(per_token_cast_to_fp8))(bg._normal(3, (g, bg.MASKED_MAX_M, k)))
    b = jax.jit(jax.vmap(per_block_cast_to_fp8))(bg._normal(1, (g, n, k)))
    hint = int(1.2 * expected)
    fn = jax.jit(lambda a, b, mm: m_grouped_fp8_gemm_nt_masked(a, b, mm, hint))
    c = _C.select_fp8_gemm_config(bg.MASKED_MAX_M, n, k, get_num_sms(), grouping="masked",
                                  num_groups=g, expected_m=hint)
    tile = f"{c['block_m']}x{c['block_n']}" + (" tail" if c["tail_split"] else "")
    given = os.environ.get("JDG_MASKED_M")
    for draw in ["given"] if given else range(draws):
        if given:
            masked_m = np.asarray([int(r) for r in given.split(",")], np.int32)
            assert masked_m.shape == (g,), f"JDG_MASKED_M has {masked_m.size} sizes for {g} groups"
        elif os.environ.get("JDG_EXACT"):
            masked_m = np.full(g, expected, np.int32)
        else:
            rng = np.random.default_rng(draw)
            masked_m = np.asarray([int(expected * rng.uniform(0.7, 1.3)) for _ in range(g)], np.int32)
        us = bg._timed(fn, (a, b, jnp.asarray(masked_m)), 20)["us"]
        m_blocks = int(sum(-(-int(r) // 128) for r in masked_m))
        tflops = 2.0 * int(masked_m.sum()) * n * k / us / 1e6
        print(f"masked {g:3d} {expected:5d} {n:5d} {k:5d} draw {draw} rows {int(masked_m.sum()):5d} "
              f"m_blocks {m_blocks:3d} {us:8.1f} us {tflops:7.1f} TFLOPS  {tile}", flush=True)
