"""Shared by the tests of the native JIT runtime (test_jit_runtime.py, test_jit_cache.py): the extension, a stub
kernel header, compiler detection, and running compilations in fresh processes. None of it needs a GPU.

Every test gets its own DG_JIT_CACHE_DIR under tmp_path (the `isolated` fixture).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import jax_deepgemm


def _import_extension():
    """jax_deepgemm._C; when a source checkout on sys.path shadows the installed package (whose directory alone
    holds the built extension), the installed extension file is loaded instead."""
    try:
        from jax_deepgemm import _C as ext  # noqa: PLC0415

        return ext
    except ImportError:
        import importlib.metadata  # noqa: PLC0415
        import importlib.util  # noqa: PLC0415

        files = importlib.metadata.distribution("jax_deepgemm").files or []
        (path,) = [f.locate() for f in files if f.name.startswith("_C.") and f.name.endswith(".so")]
        spec = importlib.util.spec_from_file_location("jax_deepgemm._C", path)
        ext = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ext)
        sys.modules["jax_deepgemm._C"] = ext
        return ext


_C = _import_extension()

REPO = Path(__file__).resolve().parent.parent
# The kernel sources: the checkout's cuda/, or the copy installed into the package.
CUDA_DIR = REPO / "cuda" if (REPO / "cuda" / "jax_deepgemm").is_dir() else Path(jax_deepgemm.__file__).parent / "include"
ABI_HEADER = CUDA_DIR / "jax_deepgemm" / "fp8_gemm_abi.h"
REAL_KERNEL = CUDA_DIR / "jax_deepgemm" / "fp8_gemm.cuh"
ARCH = "sm_90a"
ENV_VARS = ("DG_JIT_CACHE_DIR", "DG_JIT_USE_NVRTC", "DG_JIT_NVCC_COMPILER", "DG_JIT_DEBUG", "DG_JIT_PTXAS_VERBOSE",
            "DG_JIT_PRINT_COMPILER_COMMAND", "DG_JIT_REGISTER_USAGE_LEVEL", "DG_JIT_FFMA_YIELD_PERIOD",
            "DG_PRINT_CONFIGS", "DG_PROFILE_WAITS")
MACROS = ("JDG_N", "JDG_K", "JDG_BLOCK_M", "JDG_BLOCK_N", "JDG_STAGES", "JDG_A_E5M2", "JDG_B_E5M2",
          "JDG_B_SCALE_PER_ROW", "JDG_OUT_F32", "JDG_C_KIND")

# A stand-in for the real kernel: it is only compiled, never launched, so it takes a plain pointer instead of the
# ABI's argument list (and keeps working when that list changes); it includes the ABI header and uses every macro, so
# that a missing macro or a broken header is a compile error.
STUB_KERNEL = """\
#pragma once
#include <jax_deepgemm/fp8_gemm_abi.h>
extern "C" __global__ void jdg_fp8_gemm(int* out) {
  constexpr int kSum = JDG_N + JDG_K + JDG_BLOCK_M + JDG_BLOCK_N + JDG_STAGES + JDG_A_E5M2 + JDG_B_E5M2 +
                       JDG_B_SCALE_PER_ROW + JDG_OUT_F32 + JDG_C_KIND;
  if (threadIdx.x == 0) out[0] = kSum;
}
"""

PROBLEM = dict(arch=ARCH, m=256, n=7168, k=2048, num_sms=132, a_e5m2=False, b_e5m2=False, b_scale_per_row=False,
               out_f32=False, c_kind=0)


def nvrtc_candidates() -> list[str]:
    roots = list(site.getsitepackages()) + [site.getusersitepackages()] + sys.path
    found = []
    for root in roots:
        for path in sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib", "libnvrtc.so*"))):
            if "builtins" not in path and path not in found:
                found.append(path)
    return found


def make_include_dir(root: Path, kernel_text: str) -> Path:
    (root / "jax_deepgemm").mkdir(parents=True)
    shutil.copy(ABI_HEADER, root / "jax_deepgemm" / "fp8_gemm_abi.h")
    (root / "jax_deepgemm" / "fp8_gemm.cuh").write_text(kernel_text)
    return root


@pytest.fixture(scope="module")
def stub_dir(tmp_path_factory) -> Path:
    return make_include_dir(tmp_path_factory.mktemp("stub_include"), STUB_KERNEL)


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """A fresh cache dir and no DG_* settings; the extension's configuration is restored afterwards."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DG_JIT_CACHE_DIR", str(tmp_path / "jit_cache"))
    previous = _C.runtime_info()["kernel_include_dir"]
    yield
    _C.configure(previous or str(CUDA_DIR), nvrtc_candidates())


def have_nvrtc() -> bool:
    _C.configure(_C.runtime_info()["kernel_include_dir"] or str(CUDA_DIR), nvrtc_candidates())
    return _C.runtime_info()["nvrtc"]["available"]


def have_nvcc() -> bool:
    return _C.runtime_info()["nvcc"]["available"]


needs_nvrtc = pytest.mark.skipif(not have_nvrtc(), reason="libnvrtc not found (pip install nvidia-cuda-nvrtc)")
needs_nvcc = pytest.mark.skipif(not have_nvcc(), reason="nvcc not found (no CUDA toolkit on this machine)")
needs_compiler = pytest.mark.skipif(not (have_nvrtc() or have_nvcc()), reason="neither libnvrtc nor nvcc found")
needs_real_kernel = pytest.mark.skipif(not REAL_KERNEL.exists(), reason="cuda/jax_deepgemm/fp8_gemm.cuh not present")


def clean_env(**overrides: str) -> dict[str, str]:
    """This process's environment without DG_* settings, plus `overrides`."""
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    env.update(overrides)
    return env


def extension_script(body: str, include_dir: Path) -> str:
    """A Python program that loads the extension file directly (no jax import: a process starts in well under a
    second) and configures it for `include_dir`, followed by `body` (which uses `_C` and `json`)."""
    head = textwrap.dedent(f"""
        import importlib.util, json, sys
        spec = importlib.util.spec_from_file_location("jax_deepgemm._C", {_C.__file__!r})
        _C = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_C)
        _C.configure({str(include_dir)!r}, {nvrtc_candidates()!r})
    """)
    return head + textwrap.dedent(body)


def compile_script(include_dir: Path, problems: list[dict], before: str = "") -> str:
    """Runs `before`, then compiles `problems` in order and prints one JSON list of their results on the last
    line."""
    return extension_script(textwrap.dedent(before) + textwrap.dedent(f"""
        out = []
        for p in {problems!r}:
            r = _C.compile_fp8_gemm(**p)
            out.append({{k: r[k] for k in ("kernel", "cache", "compiler", "digest", "cubin_size")}})
        print(json.dumps(out))
    """), include_dir)


def compile_in_subprocess(include_dir: Path, env_overrides: dict[str, str], problems: list[dict]):
    """Compiles `problems` in a fresh Python process; returns (list of results, stderr)."""
    proc = subprocess.run([sys.executable, "-c", compile_script(include_dir, problems)], env=clean_env(**env_overrides),
                          capture_output=True, text=True, timeout=600, cwd=include_dir.parent)
    assert proc.returncode == 0, f"subprocess failed:\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr
