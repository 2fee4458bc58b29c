"""The same dense problem through three kernels (NOTES 91): fp8_gemm_nt, the contiguous kernel with one group (every
m_indices 0) and the ragged kernel with one group, all three forced to the dense model's tiles, stages and cluster
(DG_TUNE_*, set before each kernel is configured), whose K loops are the same source compiled in different
surroundings. Kernel time (bench.profile: L2 flushed, median of 20), not the DG_PROFILE_WAITS builds: on 8192 x 3072 x
4096 at 128 x 192 those had contiguous 5% ahead of dense per K block, where plain builds time the two equal (NOTES 91).

    [DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192] python benchmarks/experiments/dense_as_grouped.py LABEL M,N,K ...
"""

import os
import sys

import jax.numpy as jnp

from jax_deepgemm import _C, fp8_gemm_nt, fp8_grouped_gemm_nt, m_grouped_fp8_gemm_nt_contiguous
from jax_deepgemm import bench_grouped as bg
from jax_deepgemm.quantization import per_block_cast_to_fp8, per_token_cast_to_fp8

ITERS = 20
KNOBS = ("DG_TUNE_BLOCK_M", "DG_TUNE_BLOCK_N", "DG_TUNE_STAGES", "DG_TUNE_CLUSTER")


def main(label, shapes):
    given = {knob: os.environ[knob] for knob in KNOBS if knob in os.environ}  # the caller's forced choices
    for m, n, k in shapes:
        for knob in KNOBS:  # the dense model's choice (under the caller's knobs), not the previous shape's
            os.environ.pop(knob, None)
        os.environ.update(given)
        c = _C.select_fp8_gemm_config(m, n, k, 132)
        os.environ.update(DG_TUNE_BLOCK_M=str(c["block_m"]), DG_TUNE_BLOCK_N=str(c["block_n"]),
                          DG_TUNE_STAGES=str(c["stages"]), DG_TUNE_CLUSTER=str(c["cluster"]))
        a = per_token_cast_to_fp8(bg._normal(0, (m, k)))
        b = per_block_cast_to_fp8(bg._normal(1, (n, k)))
        flops = 2.0 * m * n * k
        runs = {"dense": (fp8_gemm_nt, (a, b)),
                "contiguous": (m_grouped_fp8_gemm_nt_contiguous, (a, (b[0][None], b[1][None]),
                                                                  jnp.zeros((m,), jnp.int32))),
                "ragged": (fp8_grouped_gemm_nt, (a, (b[0][None], b[1][None]), jnp.full((1,), m, jnp.int32)))}
        for op, (fn, args) in runs.items():
            us = bg._timed(fn, args, ITERS)["us"]
            print(f"{label:6s} {m}x{n}x{k} {op:10s} {us:8.1f} us {flops / us / 1e6:7.1f} TFLOPS  "
                  f"{c['block_m']}x{c['block_n']} s{c['stages']} cl{c['cluster']} grid {c['grid']}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], [tuple(int(v) for v in s.split(",")) for s in sys.argv[2:]])
