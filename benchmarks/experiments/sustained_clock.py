"""The SM clock and power a kernel runs at when it runs back to back (no L2 flush, no pause): launches the dense
GEMM in a jitted loop for ~`seconds` while nvidia-smi samples every 50 ms, then prints the median clock, power and
the throttle reasons seen, with the loop's mean time per GEMM.
Usage: python benchmarks/experiments/sustained_clock.py M,N,K [seconds]   (DG_TUNE_* pick the tiles)"""

import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp

import jax_deepgemm as dg


def main():
    m, n, k = (int(v) for v in sys.argv[1].split(","))
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    ka, kb = jax.random.split(jax.random.key(0))
    a = dg.per_token_cast_to_fp8(jax.random.normal(ka, (m, k), jnp.bfloat16))
    b = dg.per_block_cast_to_fp8(jax.random.normal(kb, (n, k), jnp.bfloat16))
    reps = 100

    @jax.jit
    def loop(a, b):
        def body(i, acc):
            # The scales depend on the carry (by a factor of 1), so XLA cannot hoist the GEMM out of the loop.
            a_i = (a[0], a[1] * (1.0 + 0.0 * acc))
            return acc + dg.fp8_gemm_nt(a_i, b)[0, 0].astype(jnp.float32)
        return jax.lax.fori_loop(0, reps, body, jnp.float32(0))

    jax.block_until_ready(loop(a, b))
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,clocks_event_reasons.active",
                            "--format=csv,noheader,nounits", "-lms", "50"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        jax.block_until_ready(loop(a, b))
        calls += reps
    elapsed = time.perf_counter() - start
    smi.terminate()
    rows = [r.split(", ") for r in smi.communicate()[0].strip().splitlines()]
    busy = [r for r in rows if len(r) == 3 and r[0].strip().isdigit()][3:-3]  # drop the edges of the loop
    clock = statistics.median(int(r[0]) for r in busy)
    power = statistics.median(float(r[1]) for r in busy)
    reasons = sorted({r[2].strip() for r in busy})
    us = elapsed / calls * 1e6
    print(f"sustained {m}x{n}x{k}: {us:.1f} us per GEMM ({2 * m * n * k / us / 1e6:.0f} TFLOPS), SM clock median "
          f"{clock} MHz, power median {power:.0f} W, throttle reasons {reasons}, {len(busy)} samples")


if __name__ == "__main__":
    main()
