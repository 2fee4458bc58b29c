"""The bridge to the compiled extension: loading it, registering its FFI targets with XLA, and deciding per
lowering whether a primitive runs its Hopper kernel or the pure-JAX reference.

Environment variables read here (the JIT's own DG_JIT_* / DG_PRINT_CONFIGS are read by the extension, see README):
  JAX_DEEPGEMM_DISABLE_KERNELS=1   always lower to the reference (debugging, A/B comparisons)
  JAX_DEEPGEMM_STRICT=1            a reference fallback on CUDA (a device that is not sm_90, symbolic shapes) is
                                   an error instead
"""

from __future__ import annotations

import glob
import os
import site
import sys
import threading
import warnings
from pathlib import Path

import jax

ARCH = "sm_90a"
DEFAULT_NUM_SMS = 132  # H100 SXM / H200: used when lowering for CUDA without a visible GPU

_PACKAGE_DIR = Path(__file__).resolve().parent
_num_sms_cap: int | None = None
_ext = None
_ext_error: str | None = None
_registered = False
_register_lock = threading.Lock()
_warned_fallbacks: set[str] = set()  # the reasons warned about, each once per process


def kernel_include_dir() -> Path:
    """Kernel headers: installed into the package by the build, or the source tree's cuda/ (editable installs)."""
    for candidate in (_PACKAGE_DIR / "include", _PACKAGE_DIR.parent / "cuda"):
        if (candidate / "jax_deepgemm").is_dir():
            return candidate
    return _PACKAGE_DIR / "include"


def _nvrtc_candidates() -> list[str]:
    """libnvrtc shipped by the nvidia-cuda-nvrtc wheels (nvidia/cu13/lib, nvidia/cuda_nvrtc/lib)."""
    roots = list(site.getsitepackages()) + [site.getusersitepackages()] + sys.path
    found: list[str] = []
    for root in roots:
        for pattern in ("nvidia/cu13/lib/libnvrtc.so*", "nvidia/cuda_nvrtc/lib/libnvrtc.so*",
                        "nvidia/cu12/lib/libnvrtc.so*"):
            for path in sorted(glob.glob(os.path.join(root, pattern))):
                if "builtins" not in path and path not in found:
                    found.append(path)
    return found


def extension():
    """The compiled module `jax_deepgemm._C`, or None (with `extension_error()` saying why)."""
    global _ext, _ext_error
    if _ext is None and _ext_error is None:
        try:
            from . import _C  # noqa: PLC0415  (optional: the package works without it)

            _C.configure(str(kernel_include_dir()), _nvrtc_candidates())
            _ext = _C
        except Exception as e:  # ImportError, or a broken build: the reference still works
            _ext_error = f"{type(e).__name__}: {e}"
    return _ext


def extension_error() -> str | None:
    extension()
    return _ext_error


def register_ffi_targets() -> bool:
    """Registers the extension's state types, then its targets, for the CUDA platform (once; threads lowering
    programs at the same time wait for the first one's registration instead of repeating it). `import jax_deepgemm`
    calls it, so that a program holding our calls runs without this process lowering one first (a deserialized
    `jax.export` artifact). XLA keeps registrations made before its CUDA backend starts until it does, and a process
    without one never uses them. False when the extension is unavailable or JAX refused a registration (then
    `extension_error()` says why, and the CUDA lowerings take the reference): an import must not fail on it."""
    global _registered, _ext_error
    with _register_lock:
        if _registered:
            return True
        ext = extension()
        if ext is None:
            return False
        try:
            for name, type_info in ext.state_types().items():
                jax.ffi.register_ffi_type(name, type_info, platform="CUDA")
            for name, bundle in ext.registrations().items():
                jax.ffi.register_ffi_target(name, bundle, platform="CUDA", api_version=1)
        except Exception as e:  # noqa: BLE001  (whatever JAX raises, the reference still works)
            _ext_error = f"registering the FFI targets failed: {type(e).__name__}: {e}"
            return False
        _registered = True
        return True


def cuda_devices() -> list:
    try:
        return jax.devices("cuda")
    except RuntimeError:
        return []


def is_sm90(device) -> bool:
    return str(getattr(device, "compute_capability", "")) == "9.0"


def set_num_sms(n: int) -> None:
    """Caps the SMs the persistent kernels use, from the next call on.

    The cap is part of each call's lowering, which JAX caches per function and argument shapes: so that a function
    traced before takes the new cap too, a change of the cap clears JAX's caches (jax.clear_caches), and every
    program is traced and compiled again. Set it before compiling to pay nothing."""
    global _num_sms_cap
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_sms: n must be a positive int, got {n!r}")
    if n != _num_sms_cap:
        _num_sms_cap = n
        jax.clear_caches()


def get_sms_cap() -> int:
    """set_num_sms's cap, 0 when none was set (the kernels then use every SM of the GPU they run on)."""
    return _num_sms_cap or 0


def device_num_sms() -> int:
    """The fewest SMs over this process's CUDA GPUs (DEFAULT_NUM_SMS without one), before set_num_sms's cap."""
    return min((getattr(d, "core_count", DEFAULT_NUM_SMS) for d in cuda_devices()), default=DEFAULT_NUM_SMS)


def get_num_sms() -> int:
    available = device_num_sms()
    return min(available, _num_sms_cap) if _num_sms_cap else available


_hbm_gbs: int | None = None


def get_hbm_gbs() -> int:
    """Peak memory bandwidth (GB/s) of the slowest GPU the CUDA driver sees, which the dense split-K choice weighs
    (heuristics.cc, step 9); 0 when no GPU or no extension can say (lowering without a GPU: the H100's rate)."""
    global _hbm_gbs
    if _hbm_gbs is None:
        ext = extension() if cuda_devices() else None
        try:
            _hbm_gbs = ext.min_peak_memory_gbs() if ext is not None else 0
        except RuntimeError:
            _hbm_gbs = 0
    return _hbm_gbs


def use_kernels(avals=()) -> bool:
    """Whether a CUDA lowering of operands `avals` should emit our FFI call (True) or the reference (False).

    Kernels are used on sm_90 devices, and when lowering for CUDA with no GPU present (ahead-of-time lowering and
    export: the program then names our kernels). Any other CUDA GPU gets the reference, and so do operands with
    symbolic dimensions (a shape-polymorphic jax.export: each kernel is compiled for its static shapes); each
    reason is warned about once.
    """
    if os.environ.get("JAX_DEEPGEMM_DISABLE_KERNELS", "0") not in ("", "0"):
        return False
    if not all(isinstance(d, int) for a in avals for d in getattr(a, "shape", ())):
        return _fallback("symbolic dimensions (a shape-polymorphic export) cannot take the kernels, which are "
                         "compiled for static shapes")
    devices = cuda_devices()
    if all(is_sm90(d) for d in devices):
        if devices and not register_ffi_targets():
            return _fallback(f"the jax_deepgemm extension is unavailable ({extension_error()})")
        return True
    names = sorted({f"{d.device_kind} (sm_{str(d.compute_capability).replace('.', '')})" for d in devices})
    return _fallback(f"the kernels need an sm_90 GPU (H100/H200), found {', '.join(names)}")


def _fallback(reason: str) -> bool:
    if os.environ.get("JAX_DEEPGEMM_STRICT", "0") not in ("", "0"):
        raise RuntimeError(f"jax_deepgemm: {reason}, and JAX_DEEPGEMM_STRICT is set")
    if reason not in _warned_fallbacks:
        warnings.warn(f"jax_deepgemm: {reason}; using the pure-JAX reference (set JAX_DEEPGEMM_STRICT=1 to make "
                      "this an error)", RuntimeWarning, stacklevel=3)
        _warned_fallbacks.add(reason)
    return False
