"""Command line: `python -m jax_deepgemm {demo,info,warmup,bench}`."""

from __future__ import annotations

import argparse
import platform
from functools import partial
import sys


def _info(args) -> int:
    import jax
    import jaxlib
    import numpy as np

    from . import __version__, runtime

    print(f"jax_deepgemm {__version__}")
    print(f"python {platform.python_version()}, jax {jax.__version__}, jaxlib {jaxlib.__version__}, "
          f"numpy {np.__version__}")
    for d in jax.devices():
        extra = f", sm_{str(d.compute_capability).replace('.', '')}" if hasattr(d, "compute_capability") else ""
        print(f"device {d.id}: {d.platform} {d.device_kind}{extra}")
    ext = runtime.extension()
    print(f"extension: {'loaded' if ext else 'unavailable: ' + str(runtime.extension_error())}")
    print(f"kernel headers: {runtime.kernel_include_dir()}")
    if ext is not None:
        for key, value in ext.runtime_info().items():
            print(f"  {key}: {value}")
    devices = runtime.cuda_devices()
    if not devices:
        print("kernels: not used (no CUDA GPU; every op runs the pure-JAX reference)")
    elif not all(runtime.is_sm90(d) for d in devices):
        print("kernels: not used (they need sm_90: H100/H200; the reference runs instead)")
    elif ext is None:
        print("kernels: not used (the extension is unavailable; the reference runs instead)")
    else:
        print(f"kernels: available (sm_90, {runtime.get_num_sms()} SMs, {runtime.get_hbm_gbs()} GB/s peak memory)")
    return 0


def _parse_shape(text: str, count: int, flag: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if len(values) != count or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{flag} takes {count} positive comma-separated ints, got {text!r}")
    return values


def _flush_mb(text: str) -> int:
    """--flush-mb: at least 128 MB, over twice the 50-60 MB L2 of an H100 / H200, or the flush would not empty it."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 128:
        raise argparse.ArgumentTypeError(f"--flush-mb takes an int >= 128 (MB; over twice the L2), got {text!r}")
    return value


# warmup flag -> (grouping, the shape it takes, what it compiles): the kernels the ops lower to for that shape.
_GROUPED_WARMUPS = {
    "contiguous": ("contiguous", "G,M,N,K", "m_grouped_fp8_gemm_nt_contiguous, M rows in all"),
    "ragged": ("ragged", "G,M,N,K", "fp8_grouped_gemm_nt, M rows in all"),
    "masked": ("masked", "G,M,N,K,EXPECTED_M", "m_grouped_fp8_gemm_nt_masked, M rows per group"),
    "k_grouped": ("k_grouped", "G,M,N,K", "k_grouped_fp8_gemm_nt_contiguous, K in all (a multiple of 128)"),
}


def _warmup(args) -> int:
    from . import runtime

    ext = runtime.extension()
    if ext is None:
        print(f"warmup needs the compiled extension: {runtime.extension_error()}", file=sys.stderr)
        return 1
    if not args.gemm and not args.exported and not any(getattr(args, flag) for flag in _GROUPED_WARMUPS):
        print("nothing to compile: pass --gemm M,N,K, a grouped shape (--contiguous, --ragged, --masked, "
              "--k-grouped) or --exported FILE; each repeatable", file=sys.stderr)
        return 2
    num_sms = args.num_sms or runtime.get_num_sms()
    hbm_gbs = args.hbm_gbs if args.hbm_gbs is not None else runtime.get_hbm_gbs()

    def compile_one(label, m, n, k, out_f32=False, c_kind=0, per_row=False, grouping="dense", g=1, expected_m=0):
        # The kernels see K padded to 16 bytes, as the lowering pads it (k-grouped: K is a multiple of 128 already).
        k_seen = k if grouping == "k_grouped" else -(-k // 16) * 16
        info = ext.compile_fp8_gemm(args.arch, m, n, k_seen, num_sms, False, False, per_row, out_f32, c_kind,
                                    grouping, g, expected_m, hbm_gbs)
        print(f"{label}: {info['kernel']}  [{info['cache']}, {info['seconds'] * 1e3:.1f} ms, {info['compiler']}]")

    try:
        for m, n, k in args.gemm:
            for out_f32, c_kind in ((False, 0),) + (((True, 2),) if args.with_f32 else ()):
                compile_one(f"fp8_gemm_nt M={m} N={n} K={k}", m, n, k, out_f32, c_kind)
        for flag, (grouping, form, _) in _GROUPED_WARMUPS.items():
            for values in getattr(args, flag):
                g, m, n, k = values[:4]
                label = f"{grouping} {form}={','.join(map(str, values))}"
                if grouping == "k_grouped":  # the weight-gradient GEMM: f32 with and without C, bf16 (bf16 weights)
                    for out_f32, c_kind in ((True, 0), (True, 2), (False, 0)):
                        compile_one(label, m, n, k, out_f32, c_kind, True, grouping, g)
                else:
                    compile_one(label, m, n, k, grouping=grouping, g=g,
                                expected_m=values[4] if len(values) > 4 else 0)
        for path in args.exported:
            for info in _warmup_exported(path, args.num_sms, args.hbm_gbs):
                print(f"{path}: {info['kernel']}  [{info['cache']}, {info['seconds'] * 1e3:.1f} ms]")
    except ValueError as e:  # a shape no kernel takes (e.g. a k-grouped K that is not a multiple of 128)
        print(f"warmup: {e}", file=sys.stderr)
        return 2
    return 0


def _warmup_exported(path: str, num_sms, hbm_gbs) -> list[dict]:
    """The kernels of a serialized jax.export artifact (aot.py)."""
    import jax

    from .aot import warmup

    try:
        with open(path, "rb") as f:
            exported = jax.export.deserialize(bytearray(f.read()))
    except Exception as e:  # (deserialize raises what flatbuffers finds; say which file it was)
        raise ValueError(f"{path} is not a serialized jax.export artifact ({type(e).__name__}: {e})") from e
    return warmup(exported, num_sms=num_sms, hbm_gbs=hbm_gbs)


def _grouped_kinds(text: str) -> tuple[str, ...]:
    from .bench_grouped import GROUPED_KINDS

    kinds = tuple(text.split(","))
    if not set(kinds) <= set(GROUPED_KINDS):
        raise argparse.ArgumentTypeError(f"a comma list of {', '.join(GROUPED_KINDS)}, not {text!r}")
    return kinds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jax_deepgemm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="FP8 MoE layer forward+backward vs bf16: accuracy and timings")
    sub.add_parser("info", help="versions, devices, and whether the kernels are available (and why not)")
    warm = sub.add_parser("warmup", help="compile the kernels that given shapes select into the cache (no GPU needed)")
    warm.add_argument("--arch", default="sm_90a")
    warm.add_argument("--num-sms", type=int, default=None, help="SM count to plan for (default: the GPU's, or 132)")
    warm.add_argument("--hbm-gbs", type=int, default=None,
                      help="peak memory bandwidth, GB/s, to plan for (default: the GPU's; 0 without one: an H100's)")
    warm.add_argument("--gemm", action="append", default=[], metavar="M,N,K", help="a dense fp8_gemm_nt shape",
                      type=partial(_parse_shape, count=3, flag="--gemm"))
    warm.add_argument("--with-f32", action="store_true", help="also the f32-output kernels (weight gradients)")
    warm.add_argument("--exported", action="append", default=[], metavar="FILE",
                      help="every kernel a serialized jax.export artifact calls (Exported.serialize())")
    for flag, (_, form, what) in _GROUPED_WARMUPS.items():
        name = f"--{flag.replace('_', '-')}"
        warm.add_argument(name, action="append", default=[], metavar=form, help=what,
                          type=partial(_parse_shape, count=form.count(",") + 1, flag=name))
    bench = sub.add_parser("bench", help="kernel time and TFLOPS vs the JAX baselines (sm_90 GPU); writes JSON")
    bench.add_argument("--iters", type=int, default=30, help="timed calls per case (median; >= 20)")
    bench.add_argument("--shape", action="append", default=[], metavar="M,N,K", help="instead of the default table")
    bench.add_argument("--only", choices=("dense", "grouped"), default=None, help="one table only")
    bench.add_argument("--grouped", default=None, metavar="KINDS", type=_grouped_kinds,
                       help="grouped rows of these kinds only: a comma list of contiguous (with ragged), masked, "
                            "k-grouped")
    bench.add_argument("--output", default=None, help="JSON path (default benchmarks/results/<gpu>.json)")
    bench.add_argument("--flush-mb", type=_flush_mb, default=512,
                       help="MB written between timed calls (L2 flush and cool-down; DeepGEMM's numbers: 8192)")
    bench.add_argument("--flush-by", choices=("write", "read"), default="write",
                       help="empty the L2 by rewriting the flush buffer (DeepGEMM's way; leaves dirty lines that the "
                            "timed kernel writes back) or by reading it (the kernel's HBM traffic is its own)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import main as demo_main

        return demo_main()
    if args.command == "bench":
        from .bench import main as bench_main

        return bench_main(args)
    return {"info": _info, "warmup": _warmup}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
