"""`warmup` (jax_deepgemm.warmup): compile, ahead of time and without a GPU, every kernel a program's calls will take.

A program's kernels are compiled when XLA compiles it (the FFI handler's instantiate stage), into the JIT cache
(DG_JIT_CACHE_DIR). This module finds them before that: it lowers the program for CUDA (or reads a `jax.export`
artifact), takes every jax_deepgemm call out of the StableHLO with its attributes (the problem: shapes, dtypes,
grouping) and compiles what the handler would compile for them, GEMMs with the configuration the heuristics pick for
the GPU planned for. So the backward pass's GEMMs and quantizations, whose shapes a user does not write down, are
warmed up too, e.g. in a container build that has no GPU.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import jax

from . import runtime
from .kernels import FP8_GEMM_TARGET, QUANTIZE_T_TARGET

# `stablehlo.custom_call @jdg_...(operands) {... mhlo.backend_config = {name = value, ...} ...}`: the call's FFI
# attributes (values: "strings", true / false, integers typed `: i64`; none nests).
_CALL = re.compile(r"custom_call @(jdg_\w+)\([^()]*\)\s*\{[^\n]*?mhlo\.backend_config = \{([^{}]*)\}")
_ATTRIBUTE = re.compile(r'(\w+) = ("[^"]*"|true|false|-?\d+)')
# Our calls in a jit over sharded operands: custom_partitioning's, whose local calls exist only once XLA partitions.
_PARTITIONED = "CustomSPMDPartitioning"


def _value(text: str):
    if text.startswith('"'):
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    return int(text)


def kernel_calls(module_text: str) -> list[tuple[str, dict]]:
    """(target, attributes) of every jax_deepgemm call in a StableHLO module's text, in program order."""
    return [(target, {name: _value(v) for name, v in _ATTRIBUTE.findall(body)})
            for target, body in _CALL.findall(module_text)]


def _module_text(program, args, kwargs) -> str:
    if isinstance(program, jax.export.Exported):
        if args or kwargs:
            raise TypeError("warmup: an Exported program takes no example arguments (its shapes are fixed)")
        return program.mlir_module()
    if not callable(program):
        raise TypeError(f"warmup: program must be a function or a jax.export.Exported, got {type(program).__name__}")
    traced = program.trace(*args, **kwargs) if hasattr(program, "trace") else jax.jit(program).trace(*args, **kwargs)
    return traced.lower(lowering_platforms=("cuda",)).as_text()


def warmup(program: Callable[..., Any] | jax.export.Exported, *args: Any, num_sms: int | None = None,
           hbm_gbs: int | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    """Compiles into the JIT cache every kernel that `program` called with `args` (arrays or
    jax.ShapeDtypeStructs; keyword arguments likewise) will take on an sm_90 GPU, or that a `jax.export.Exported`
    artifact's calls will take. Needs the extension and NVRTC or NVCC, not a GPU.

    The GEMMs' configurations are those the kernels' handler picks where the program runs: for `num_sms` SMs
    (capped by set_num_sms's cap in force when the program was lowered) and `hbm_gbs` GB/s of memory bandwidth;
    by default those of this machine's GPUs, or without one what the lowering recorded (132 SMs; bandwidth unknown,
    as on an H100). Pass both to plan for another GPU (its SM count and peak memory bandwidth).

    Returns one dict per distinct kernel: target, kernel (its name), cache ('memory' | 'disk' | 'compiled'),
    seconds, and for GEMMs the problem (m, n, k, grouping) and config. A jit over sharded operands partitions our
    calls only when XLA compiles it, so their per-device kernels cannot be seen here: warm up the program's
    shard_map form, or the per-device shapes."""
    for name, value, least in (("num_sms", num_sms, 1), ("hbm_gbs", hbm_gbs, 0)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
            raise ValueError(f"warmup: {name} must be None or an int >= {least}, got {value!r}")
    ext = runtime.extension()
    if ext is None:
        raise RuntimeError(f"warmup needs the compiled extension: {runtime.extension_error()}")
    text = _module_text(program, args, kwargs)
    calls = kernel_calls(text)
    if _PARTITIONED in text:
        what = ("the program's calls are partitioned over its devices (a jit over sharded operands) only when XLA "
                "compiles it; warm up its shard_map form or the per-device shapes")
        if not calls:
            raise ValueError(f"warmup: {what}")
        warnings.warn(f"warmup: some of {what}", RuntimeWarning, stacklevel=2)
    present = runtime.cuda_devices()
    results: dict[str, dict] = {}  # kernel name -> its first call's result
    for target, attrs in calls:
        if target == FP8_GEMM_TARGET:
            info = _compile_gemm(ext, attrs, num_sms, hbm_gbs, present)
        elif target == QUANTIZE_T_TARGET:  # (shapes are its kernels' run-time arguments)
            built = ext.compile_fp8_quantize(
                attrs["arch"], in_f32=attrs["in_f32"], per_block=attrs["per_block"], block_map=attrs["block_map"],
                untransposed=attrs["untransposed"], row_map=attrs["row_map"], rowwise=attrs["rowwise"],
                swiglu_backward=attrs["swiglu_backward"], swiglu_forward=attrs["swiglu_forward"])
            info = {"target": target, "kernel": built["kernel"], "cache": built["cache"], "seconds": built["seconds"]}
        else:  # (a target of another release: nothing here compiles it)
            raise ValueError(f"warmup: the program calls {target}, which this jax_deepgemm does not know")
        results.setdefault(info["kernel"], info)
    return list(results.values())


def _compile_gemm(ext, attrs: dict, num_sms, hbm_gbs, present) -> dict:
    """The handler's instantiate (ffi/fp8_gemm.cc): this machine's GPUs' SMs and bandwidth, else the lowering's own
    values; `num_sms` / `hbm_gbs` plan for another GPU instead. The extension applies the program's SM cap."""
    if num_sms is None:
        num_sms = runtime.device_num_sms() if present else attrs["num_sms"]
    if hbm_gbs is None:
        hbm_gbs = runtime.get_hbm_gbs() if present else attrs.get("hbm_gbs", 0)
    grouping = attrs.get("grouping", "dense")
    info = ext.compile_fp8_gemm(attrs["arch"], attrs["m"], attrs["n"], attrs["k"], num_sms, attrs["a_e5m2"],
                                attrs["b_e5m2"], attrs["b_scale_per_row"], attrs["out_f32"], attrs["c_kind"],
                                grouping, attrs.get("num_groups", 1), attrs.get("expected_m", 0), hbm_gbs,
                                attrs.get("sms_cap", 0))
    return {"target": FP8_GEMM_TARGET, "kernel": info["kernel"], "cache": info["cache"], "seconds": info["seconds"],
            "problem": {"m": attrs["m"], "n": attrs["n"], "k": attrs["k"], "grouping": grouping,
                        "num_groups": attrs.get("num_groups", 1), "num_sms": info["num_sms"], "hbm_gbs": hbm_gbs},
            "config": info["config"]}
