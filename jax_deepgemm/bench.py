"""`python -m jax_deepgemm bench`: kernel time of the FP8 GEMMs and of the same-run JAX baselines on the GPU.

Timing (GPU.md's rules): every timed call is preceded by an L2 flush (a write of `--flush-mb`, far over the 50-60 MB
L2, or with `--flush-by read` a read of it; see `flush_bytes`, `flush_by`);
the calls run under `jax.profiler` and the device's own kernel durations are read back from the trace
(`jax.profiler.ProfileData`): for each call, the kernels that ran between its flush and the next.
`kernel_us` is our kernel alone (the `jdg_*` CUDA kernel), the baselines count every kernel of their program
(the dequantize-then-dot path is two or three kernels; that is the status quo it stands for). Median of `iters`
calls after warm-up. `jit_us` is what a user sees: wall time per call of the jitted op, back to back, the median of
five such loops (dense rows also give the baselines' own, `baselines_jit_us`).
"""

from __future__ import annotations

import datetime
import glob
import json
import os
import subprocess
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

from .gemm import fp8_gemm_nt
from .quantization import dequantize, per_block_cast_to_fp8, per_token_cast_to_fp8

# DeepGEMM's dense table (M x (N, K)) and a few of our own: decode-size M, a prefill M and a non-aligned shape.
DENSE_NK = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
DENSE_SHAPES = [(m, n, k) for m in (64, 128, 4096) for n, k in DENSE_NK] + [
    (1, 7168, 2048), (256, 7168, 2048), (2048, 2112, 7168), (4096, 7000, 7000)]
# Bytes written between two timed calls (`--flush-mb`). Anything over 2x the 50-60 MB L2 empties it. The size also
# sets how long the GPU idles between calls (the FP8 GEMMs run the H100 / H200 into its power cap); DeepGEMM's
# numbers in GPU.md were taken after 8 GB flushes, and on an H200 8 GB and 512 MB gave the same kernel times
# within 0.5% (benchmarks/NOTES.md 14).
flush_bytes = 512 << 20
# How the flush empties the L2 (`--flush-by`). "write" (DeepGEMM's way, so its numbers compare): the buffer is
# rewritten, which leaves the L2 full of dirty lines that the timed kernel then writes back to HBM alongside its own
# reads. "read": the buffer is only read, so the timed kernel's HBM traffic is its own (on an H100 a pure 140 MB read
# stream ran at 2.33-2.39 TB/s after a write flush and 2.83-2.93 after a read one: benchmarks/NOTES.md 58).
flush_by = "write"


def _trace_kernels(run) -> list[tuple[str, int, int]]:
    """Runs `run()` under the profiler; returns the GPU kernel events (name, start_ns, end_ns) in start order."""
    from jax.profiler import ProfileData

    with tempfile.TemporaryDirectory() as trace_dir:
        jax.profiler.start_trace(trace_dir)
        run()
        jax.profiler.stop_trace()
        (path,) = glob.glob(os.path.join(trace_dir, "**", "*.xplane.pb"), recursive=True)
        data = ProfileData.from_file(path)
    kernels = []
    for plane in data.planes:
        if plane.name.startswith("/device:GPU"):
            for line in plane.lines:
                if line.name.startswith("Stream"):
                    kernels += [(e.name, e.start_ns, e.end_ns) for e in line.events]
    if not kernels:
        raise RuntimeError("the profiler trace holds no GPU kernel events")
    return sorted(kernels, key=lambda e: e[1])


def trace_flushed_calls(jitted, args, iters: int) -> tuple[set[str], list[tuple[str, int, int]]]:
    """`iters` calls of `jitted`, each after an L2 flush, under the profiler (after a warm-up): the flush kernels'
    names (which a flush-only trace tells) and every kernel event in start order."""
    buf = [jnp.zeros((flush_bytes // 4096, 1024), jnp.float32)]
    if flush_by == "read":
        reduce = jax.jit(jnp.max)

        def flush_once():
            jax.block_until_ready(reduce(buf[0]))
    else:
        rewrite = jax.jit(lambda b: b + 1.0, donate_argnums=0)

        def flush_once():
            buf[0] = rewrite(buf[0])
            jax.block_until_ready(buf[0])

    for _ in range(3):  # compile and warm up
        flush_once()
        jax.block_until_ready(jitted(*args))

    flush_names = {name for name, _, _ in _trace_kernels(flush_once)}

    def calls():
        for _ in range(iters):
            flush_once()
            jax.block_until_ready(jitted(*args))

    return flush_names, _trace_kernels(calls)


def per_call_us(events, flush_names: set[str], kernel_prefix: str | None, iters: int) -> list[float]:
    """Each call's kernel time in us from a trace of `iters` (flush, call) pairs: the kernels after one flush and
    before the next (a flush of several kernels counts once), those named `kernel_prefix`* only if given. More calls
    than `iters` means a timed kernel shares a flush kernel's name and the split is wrong: an error, not a number."""
    per_call, current = [], None
    for name, start, end in events:
        if name in flush_names:
            if current:
                per_call.append(current)
            current = 0.0
        elif current is not None and (kernel_prefix is None or name.startswith(kernel_prefix)):
            current += (end - start) / 1e3
    if current:
        per_call.append(current)
    if len(per_call) < iters // 2 or len(per_call) > iters:
        raise RuntimeError(f"found {len(per_call)} calls in a trace of {iters} (a kernel of the timed program may "
                           f"share a name with the flush's: {sorted(flush_names)})" if len(per_call) > iters else
                           f"found {len(per_call)} of {iters} calls in the trace")
    return per_call


def kernels_per_call(fn, args, iters: int = 20) -> dict[str, float]:
    """Median us per call of each kernel the jitted `fn` launches, each call after an L2 flush (the flush's kernels
    left out): where a call's time goes (benchmarks/experiments)."""
    flush_names, events = trace_flushed_calls(jax.jit(fn), args, iters)
    times: dict[str, list[float]] = {}
    for name, start, end in events:
        if name not in flush_names:
            times.setdefault(name, []).append((end - start) / 1e3)
    return {name: float(np.median(t)) for name, t in times.items()}


def profile(fn, args, *, iters: int, kernel_prefix: str | None, wall_rounds: int = 5) -> dict:
    """Median device time per call of the jitted `fn`, each call after an L2 flush, and (`wall_rounds` > 0) its wall
    time per call back to back, see wall_us_per_call.

    The trace is split at the flush kernels: the kernels between two flushes are one call's."""
    jitted = jax.jit(fn)
    flush_names, events = trace_flushed_calls(jitted, args, iters)
    per_call = per_call_us(events, flush_names, kernel_prefix, iters)
    wall_us = wall_us_per_call(jitted, args, iters, wall_rounds) if wall_rounds > 0 else None
    return {"us": float(np.median(per_call)), "wall_us": wall_us, "samples": len(per_call)}


def wall_us_per_call(jitted, args, iters: int, rounds: int) -> float:
    """Wall time per call of `iters` calls back to back (host dispatch and kernels overlapping, as a user's loop
    runs them), the median of `rounds` such loops: one loop of a small shape lasts a few milliseconds, too short to
    stand still between runs (benchmarks/NOTES.md 73)."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(iters):
            out = jitted(*args)
        jax.block_until_ready(out)
        samples.append((time.perf_counter() - start) / iters * 1e6)
    return float(np.median(samples))


def _per_tensor_fp8_dot(x, w):
    """XLA's own FP8 GEMM (cuBLASLt) with per-tensor scales, the best JAX has without block scaling."""
    sx = jnp.max(jnp.abs(x)).astype(jnp.float32) / 448
    sw = jnp.max(jnp.abs(w)).astype(jnp.float32) / 448
    x8 = (x / sx).astype(jnp.float8_e4m3fn)
    w8 = (w / sw).astype(jnp.float8_e4m3fn)
    return x8, sx, w8, sw


def dense_row(m: int, n: int, k: int, iters: int) -> dict:
    kx, kw = jax.random.split(jax.random.key(m * 7 + n * 3 + k))
    x = jax.random.normal(kx, (m, k), jnp.bfloat16)
    w = jax.random.normal(kw, (n, k), jnp.bfloat16)
    a, b = jax.jit(per_token_cast_to_fp8)(x), jax.jit(per_block_cast_to_fp8)(w)
    x8, sx, w8, sw = jax.jit(_per_tensor_fp8_dot)(x, w)
    dims = (((1,), (1,)), ((), ()))

    def xla_fp8(x8, sx, w8, sw):
        # bf16 out, then the scales: XLA folds the scalar into the cuBLASLt call. With an f32 product scaled and
        # cast afterwards it runs a separate pass over the f32 output (4096 x 7168 x 16384 on an H100: 602 + 54 us
        # against 600 us, benchmarks/NOTES.md 54).
        d = jax.lax.dot_general(x8, w8, dims, preferred_element_type=jnp.bfloat16)
        return d * (sx * sw).astype(jnp.bfloat16)

    def xla_bf16(x, w):
        return jax.lax.dot_general(x, w, dims, preferred_element_type=jnp.bfloat16)

    def dequant_bf16(a, b):
        return xla_bf16(dequantize(a).astype(jnp.bfloat16), dequantize(b).astype(jnp.bfloat16))

    ours = profile(fp8_gemm_nt, (a, b), iters=iters, kernel_prefix="jdg_")
    flops = 2.0 * m * n * k
    bytes_moved = m * k + n * k + 2 * m * n + 4 * (a[1].size + b[1].size)
    base = {name: profile(fn, fn_args, iters=iters, kernel_prefix=None)
            for name, fn, fn_args in (("xla_fp8_per_tensor_us", xla_fp8, (x8, sx, w8, sw)),
                                      ("xla_bf16_us", xla_bf16, (x, w)),
                                      ("dequant_bf16_us", dequant_bf16, (a, b)))}
    return {
        "op": "fp8_gemm_nt", "shape": [m, n, k],
        "kernel_us": round(ours["us"], 2), "tflops": round(flops / ours["us"] / 1e6, 1),
        "gbs": round(bytes_moved / ours["us"] / 1e3, 1), "jit_us": round(ours["wall_us"], 2),
        "baselines": {name: round(p["us"], 2) for name, p in base.items()},
        # what a user sees of each baseline (wall time per call, back to back: kernels plus host dispatch), to
        # compare with jit_us
        "baselines_jit_us": {name: round(p["wall_us"], 2) for name, p in base.items()},
    }


def _gpu_name() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, check=True).stdout.splitlines()[0].strip()
    except (OSError, subprocess.CalledProcessError, IndexError):
        return jax.devices()[0].device_kind


def _commit() -> str:
    if os.environ.get("JDG_COMMIT"):
        return os.environ["JDG_COMMIT"]
    try:
        # "-dirty" when the tree differs from HEAD (a device copy of a working tree): then JDG_COMMIT should say
        return subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=7"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(args) -> int:
    from . import runtime

    if not any(runtime.is_sm90(d) for d in runtime.cuda_devices()):
        print("bench needs an sm_90 GPU (H100/H200): the kernels do not run here")
        return 1
    global flush_bytes, flush_by
    flush_bytes = args.flush_mb << 20
    flush_by = args.flush_by
    gpu = _gpu_name()
    kind = "h200" if "H200" in gpu else "h100" if "H100" in gpu else gpu.lower().replace(" ", "_")
    shapes = DENSE_SHAPES if not args.shape else [tuple(int(v) for v in s.split(",")) for s in args.shape]
    if args.only == "grouped":
        shapes = []
    rows = []
    flushed = "written" if flush_by == "write" else "read"
    print(f"{gpu}: fp8_gemm_nt, kernel time ({args.flush_mb} MB {flushed} between calls, median of {args.iters})")
    print(f"{'M':>6} {'N':>6} {'K':>6} {'us':>9} {'TFLOPS':>7} {'GB/s':>7} {'jit us':>8} | {'fp8/t':>8} "
          f"{'bf16':>8} {'deq+bf16':>8}")
    for m, n, k in shapes:
        row = dense_row(m, n, k, args.iters)
        rows.append(row)
        base = row["baselines"]
        print(f"{m:>6} {n:>6} {k:>6} {row['kernel_us']:>9.1f} {row['tflops']:>7.0f} {row['gbs']:>7.0f} "
              f"{row['jit_us']:>8.1f} | {base['xla_fp8_per_tensor_us']:>8.1f} {base['xla_bf16_us']:>8.1f} "
              f"{base['dequant_bf16_us']:>8.1f}", flush=True)
    if args.only != "dense" and not args.shape:
        from .bench_grouped import GROUPED_KINDS, grouped_rows

        print(f"grouped GEMMs, kernel time (L2 flushed, median of {args.iters}); baselines bf16, all their kernels")
        print(f"{'op':<34} {'shape':<24} {'us':>9} {'TFLOPS':>7} {'jit us':>8} | {'ragged_dot':>10} {'einsum':>8}"
              "  draw (rows or K per group)")

        def report(row):
            base = row["baselines"]
            print(f"{row['op']:<34} {str(row['shape']):<24} {row['kernel_us']:>9.1f} {row['tflops']:>7.0f} "
                  f"{row['jit_us']:>8.1f} | {base['ragged_dot_bf16_us']:>10.1f} {base['batched_einsum_bf16_us']:>8.1f}"
                  f"  {row['draw']}", flush=True)

        rows += grouped_rows(args.iters, report, args.grouped or GROUPED_KINDS)
    result = {"gpu": gpu, "date": datetime.date.today().isoformat(), "commit": _commit(), "flush_mb": args.flush_mb,
              "flush_by": flush_by, "rows": rows}
    out = args.output or os.path.join("benchmarks", "results", f"{kind}.json")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {out}")
    return 0
