"""Kernel time of programs lowered for more SMs than the GPU has (as a jax.export artifact from a larger GPU would
be): the lowering's SM count is this GPU's times 1, 2 and 4. The FFI handler takes the configuration for this GPU
when XLA instantiates the call (NOTES 96), so the three should run alike; the configuration the heuristics would
take for the larger count is printed beside them. One line per shape and factor.

    python benchmarks/experiments/more_sms.py 4096,7168,7168 64,2112,7168 ...
"""

import sys

import jax

from jax_deepgemm import bench, fp8_gemm_nt, per_block_cast_to_fp8, per_token_cast_to_fp8, runtime

sms = runtime.get_num_sms()
ext = runtime.extension()
for spec in sys.argv[1:]:
    m, n, k = (int(v) for v in spec.split(","))
    kx, kw = jax.random.split(jax.random.key(m * 7 + n * 3 + k))
    a = jax.jit(per_token_cast_to_fp8)(jax.random.normal(kx, (m, k), jax.numpy.bfloat16))
    b = jax.jit(per_block_cast_to_fp8)(jax.random.normal(kw, (n, k), jax.numpy.bfloat16))
    for factor in (1, 2, 4):
        runtime.get_num_sms = lambda f=factor: f * sms  # what kernels.py asks when it lowers
        jax.clear_caches()
        cfg = ext.select_fp8_gemm_config(m, n, k, factor * sms, hbm_gbs=runtime.get_hbm_gbs())
        us = bench.profile(lambda a, b: fp8_gemm_nt(a, b), (a, b), iters=20, kernel_prefix="jdg_")["us"]
        print(f"{m:6d} {n:6d} {k:6d} lowered for {factor * sms:4d} SMs (their pick: {cfg['block_m']:3d} x "
              f"{cfg['block_n']:3d}, cluster {cfg['cluster']}, split_k {cfg['split_k']}, grid {cfg['grid']:4d}) "
              f"{us:9.1f} us", flush=True)
