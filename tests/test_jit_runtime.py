"""The native runtime (jax_deepgemm._C): module API, config heuristic, JIT compilation with NVRTC / NVCC, the
in-memory and on-disk caches, and the FFI handler's attribute contract. Runs without a GPU.

Kernels are compiled for sm_90a from a stub kernel header (always) and from the real cuda/ headers (when
cuda/jax_deepgemm/fp8_gemm.cuh exists). Every test uses its own DG_JIT_CACHE_DIR under tmp_path.
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
            "DG_JIT_PRINT_COMPILER_COMMAND", "DG_PRINT_CONFIGS")
MACROS = ("JDG_N", "JDG_K", "JDG_BLOCK_M", "JDG_BLOCK_N", "JDG_STAGES", "JDG_A_E5M2", "JDG_B_E5M2",
          "JDG_B_SCALE_PER_ROW", "JDG_OUT_F32", "JDG_C_KIND")

# A kernel with the real signature that does (almost) nothing: it exercises the compile path without the real
# kernel, and uses every macro so that a missing one is a compile error.
STUB_KERNEL = """\
#pragma once
#include <jax_deepgemm/fp8_gemm_abi.h>
extern "C" __global__ void __launch_bounds__(jdg::fp8_gemm_num_threads(JDG_BLOCK_M))
jdg_fp8_gemm(const __grid_constant__ jdg::TmaDescriptor tensor_map_a,
             const __grid_constant__ jdg::TmaDescriptor tensor_map_b, const jdg::Fp8GemmArgs args) {
  constexpr int kSum = JDG_N + JDG_K + JDG_BLOCK_M + JDG_BLOCK_N + JDG_STAGES + JDG_A_E5M2 + JDG_B_E5M2 +
                       JDG_B_SCALE_PER_ROW + JDG_OUT_F32 + JDG_C_KIND;
  if (threadIdx.x == 0 && args.m == -kSum) static_cast<float*>(args.d)[0] = args.a_scale[0];
}
"""


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

PROBLEM = dict(arch=ARCH, m=256, n=7168, k=2048, num_sms=132, a_e5m2=False, b_e5m2=False, b_scale_per_row=False,
               out_f32=False, c_kind=0)


def compile_in_subprocess(include_dir: Path, env_overrides: dict[str, str], problems: list[dict]):
    """Compiles `problems` in a fresh Python process; returns (list of results, stderr).

    Subprocesses run outside the source tree, so that they import the installed package."""
    script = textwrap.dedent(f"""
        import json, sys
        from jax_deepgemm import _C
        _C.configure({str(include_dir)!r}, {nvrtc_candidates()!r})
        out = []
        for p in {problems!r}:
            r = _C.compile_fp8_gemm(**p)
            out.append({{k: r[k] for k in ("kernel", "cache", "compiler", "digest", "cubin_size")}})
        print(json.dumps(out))
    """)
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    env.update(env_overrides)
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600,
                          cwd=include_dir.parent)
    assert proc.returncode == 0, f"subprocess failed:\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


# ---------------------------------------------------------------------------------------------------------------
# Module API and heuristic (no compiler needed)


def test_registrations_and_state_types():
    regs = _C.registrations()
    assert set(regs) == {"jdg_fp8_gemm"}
    assert set(regs["jdg_fp8_gemm"]) == {"instantiate", "initialize", "execute"}
    assert all(type(c).__name__ == "PyCapsule" for c in regs["jdg_fp8_gemm"].values())
    types = _C.state_types()
    assert len(types) == 1
    (entry,) = types.values()
    assert set(entry) == {"type_id", "type_info"}
    assert all(type(c).__name__ == "PyCapsule" for c in entry.values())


def test_runtime_info(tmp_path):
    info = _C.runtime_info()
    assert set(info) >= {"driver", "nvrtc", "nvcc", "cache_dir"}
    assert info["cache_dir"] == str(tmp_path / "jit_cache")
    for tool in ("nvrtc", "nvcc"):
        s = info[tool]
        assert (s["version"] is not None) == s["available"]
        assert s["available"] or s["error"]
    assert info["driver"]["loaded"] or info["driver"]["error"]


SMEM_LIMIT = 232448


@pytest.mark.parametrize("m,n,k", [(1, 2112, 7168), (64, 7168, 2048), (65, 4096, 512), (128, 2112, 7168),
                                   (4096, 7168, 2048), (4096, 2112, 7168), (300, 24576, 1536), (7, 16, 128),
                                   (1024, 100, 16)])
@pytest.mark.parametrize("num_sms", [132, 78, 1])
def test_heuristic(m, n, k, num_sms):
    c = _C.select_fp8_gemm_config(m, n, k, num_sms)
    assert c["block_m"] == (64 if m <= 64 else 128)
    assert c["block_n"] % 16 == 0 and 16 <= c["block_n"] <= 256
    kb = -(-k // 128)
    assert 1 <= c["stages"] <= min(8, kb + 1)
    assert c["smem_bytes"] <= SMEM_LIMIT
    assert c["num_threads"] == 128 + 128 * (c["block_m"] // 64)
    tiles = -(-m // c["block_m"]) * -(-n // c["block_n"])
    assert c["tiles"] == tiles and c["waves"] == -(-tiles // num_sms)
    assert c["grid"] == min(num_sms, tiles)
    # No other supported BLOCK_N gives fewer waves.
    for bn in range(16, 257, 16):
        other = -(-m // c["block_m"]) * -(-n // bn)
        if bn <= 192:
            assert -(-other // num_sms) >= c["waves"]


def test_heuristic_per_row_scale_cap():
    # Per-row (1x128) B scales cost the kernel registers: BLOCK_N stays at or below 176.
    assert _C.select_fp8_gemm_config(4096, 768, 1024, 4)["block_n"] == 192
    assert _C.select_fp8_gemm_config(4096, 768, 1024, 4, b_scale_per_row=True)["block_n"] <= 176


def test_heuristic_examples():
    # M=256, N=7168 on 132 SMs: BLOCK_N=112 makes 2 x 64 = 128 tiles in one wave (BLOCK_N=128 would need 112 SMs,
    # any smaller BLOCK_N two waves).
    c = _C.select_fp8_gemm_config(256, 7168, 2048, 132)
    assert (c["block_m"], c["block_n"], c["waves"], c["grid"]) == (128, 112, 1, 128)
    # Small M fills the SMs with narrow tiles.
    c = _C.select_fp8_gemm_config(64, 2112, 7168, 132)
    assert (c["block_m"], c["block_n"], c["tiles"]) == (64, 16, 132)


def test_print_configs_once_per_shape(tmp_path):
    script = ("from jax_deepgemm import _C\n"
              "for _ in range(3): _C.select_fp8_gemm_config(256, 7168, 2048, 132)\n"
              "_C.select_fp8_gemm_config(512, 7168, 2048, 132)\n")
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    env["DG_PRINT_CONFIGS"] = "1"
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "fp8_gemm m=" in line]
    assert len(lines) == 2, proc.stderr
    assert "m=256 n=7168 k=2048" in lines[0] and "block_n=112" in lines[0]


@pytest.mark.parametrize("bad", [dict(k=100), dict(k=0), dict(n=0), dict(m=-1), dict(num_sms=0), dict(c_kind=3),
                                 dict(arch="sm90"), dict(arch="sm_90a; rm -rf /")])
def test_invalid_problem_raises_value_error(stub_dir, bad):
    _C.configure(str(stub_dir), nvrtc_candidates())
    with pytest.raises(ValueError):
        _C.compile_fp8_gemm(**{**PROBLEM, **bad})


# ---------------------------------------------------------------------------------------------------------------
# Compilation and caches


@needs_nvrtc
def test_nvrtc_compile_then_memory_hit(stub_dir, tmp_path, monkeypatch):
    _C.configure(str(stub_dir), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "1")
    r = _C.compile_fp8_gemm(**PROBLEM)
    assert r["cache"] == "compiled"
    assert r["compiler"].startswith("NVRTC ")
    assert r["seconds"] > 0
    assert r["kernel"].startswith("jdg_fp8_gemm_n7168_k2048_")
    assert set(r["config"]) >= {"block_m", "block_n", "stages", "num_threads", "smem_bytes", "grid"}
    assert r["config"] == {**_C.select_fp8_gemm_config(256, 7168, 2048, 132)}
    for macro in MACROS:
        assert f"#define {macro} " in r["source"]
    assert r["source"].rstrip().endswith("#include <jax_deepgemm/fp8_gemm.cuh>")
    entry = tmp_path / "jit_cache" / "cache" / f"{r['kernel']}.{r['digest']}"
    assert (entry / "kernel.cu").read_text() == r["source"]
    assert (entry / "kernel.cubin").read_bytes()[:4] == b"\x7fELF"
    assert (entry / "kernel.meta").exists()
    assert not list((tmp_path / "jit_cache" / "tmp").iterdir())

    again = _C.compile_fp8_gemm(**PROBLEM)
    assert again["cache"] == "memory"
    assert (again["kernel"], again["digest"]) == (r["kernel"], r["digest"])

    # Every flag is part of the kernel name and the key.
    flipped = _C.compile_fp8_gemm(**{**PROBLEM, "a_e5m2": True, "out_f32": True, "c_kind": 2})
    assert flipped["cache"] == "compiled" and flipped["kernel"] != r["kernel"]
    assert "#define JDG_A_E5M2 1" in flipped["source"] and "#define JDG_C_KIND 2" in flipped["source"]


@needs_compiler
def test_disk_hit_in_new_process(stub_dir, tmp_path):
    env = {"DG_JIT_CACHE_DIR": str(tmp_path / "jit_cache")}
    (first,), _ = compile_in_subprocess(stub_dir, env, [PROBLEM])
    (second,), _ = compile_in_subprocess(stub_dir, env, [PROBLEM])
    assert first["cache"] == "compiled"
    assert second["cache"] == "disk"
    assert second["digest"] == first["digest"] and second["cubin_size"] == first["cubin_size"]


@needs_compiler
def test_header_change_invalidates_cache(tmp_path):
    include = make_include_dir(tmp_path / "inc", STUB_KERNEL)
    env = {"DG_JIT_CACHE_DIR": str(tmp_path / "jit_cache")}
    (first,), _ = compile_in_subprocess(include, env, [PROBLEM])
    (include / "jax_deepgemm" / "extra.cuh").write_text("// a new header changes every key\n")
    (second,), _ = compile_in_subprocess(include, env, [PROBLEM])
    assert second["cache"] == "compiled" and second["digest"] != first["digest"]


@needs_compiler
@pytest.mark.parametrize("damage", ["truncate", "flip", "delete_meta"])
def test_damaged_cubin_is_rebuilt(stub_dir, tmp_path, damage):
    env = {"DG_JIT_CACHE_DIR": str(tmp_path / "jit_cache")}
    (first,), _ = compile_in_subprocess(stub_dir, env, [PROBLEM])
    entry = tmp_path / "jit_cache" / "cache" / f"{first['kernel']}.{first['digest']}"
    cubin = entry / "kernel.cubin"
    good = cubin.read_bytes()
    if damage == "truncate":
        cubin.write_bytes(good[: len(good) // 2])
    elif damage == "flip":
        cubin.write_bytes(good[:100] + bytes([good[100] ^ 0xFF]) + good[101:])
    else:
        (entry / "kernel.meta").unlink()
    (second,), stderr = compile_in_subprocess(stub_dir, env, [PROBLEM])
    assert second["cache"] == "compiled"
    assert "damaged" in stderr
    assert cubin.read_bytes()[:4] == b"\x7fELF" and len(cubin.read_bytes()) == len(good)
    (third,), stderr = compile_in_subprocess(stub_dir, env, [PROBLEM])
    assert third["cache"] == "disk" and "damaged" not in stderr
    assert not list((tmp_path / "jit_cache" / "tmp").iterdir())


@needs_compiler
def test_unusable_cache_dir_falls_back_to_memory(stub_dir, tmp_path):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a file where the cache directory should be")
    env = {"DG_JIT_CACHE_DIR": str(blocker / "cache")}
    other = {**PROBLEM, "n": 4096}
    results, stderr = compile_in_subprocess(stub_dir, env, [PROBLEM, PROBLEM, other])
    assert [r["cache"] for r in results] == ["compiled", "memory", "compiled"]
    assert stderr.count("warning") == 1, stderr
    assert "in memory only" in stderr


@needs_compiler
def test_concurrent_processes_share_one_entry(stub_dir, tmp_path):
    cache = tmp_path / "jit_cache"
    script = textwrap.dedent(f"""
        import json
        from jax_deepgemm import _C
        _C.configure({str(stub_dir)!r}, {nvrtc_candidates()!r})
        r = _C.compile_fp8_gemm(**{PROBLEM!r})
        print(json.dumps([r["cache"], r["digest"]]))
    """)
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    env["DG_JIT_CACHE_DIR"] = str(cache)
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path) for _ in range(4)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        outs.append(json.loads(out.strip().splitlines()[-1]))
    assert len({digest for _, digest in outs}) == 1
    assert {c for c, _ in outs} <= {"compiled", "disk"}
    assert len(list((cache / "cache").iterdir())) == 1
    assert not list((cache / "tmp").iterdir())
    (again,), _ = compile_in_subprocess(stub_dir, {"DG_JIT_CACHE_DIR": str(cache)}, [PROBLEM])
    assert again["cache"] == "disk"


@needs_nvcc
def test_nvcc_compile(stub_dir, monkeypatch):
    _C.configure(str(stub_dir), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "0")
    monkeypatch.setenv("DG_JIT_PTXAS_VERBOSE", "1")
    r = _C.compile_fp8_gemm(**PROBLEM)
    assert r["cache"] == "compiled"
    assert r["compiler"].startswith("NVCC ")
    assert "registers" in r["log"]  # ptxas -v statistics
    assert _C.compile_fp8_gemm(**PROBLEM)["cache"] == "memory"


@needs_nvcc
def test_auto_choice_falls_back_to_nvcc(stub_dir, tmp_path):
    """With DG_JIT_USE_NVRTC unset, a process whose libnvrtc cannot be loaded compiles with NVCC."""
    script = textwrap.dedent(f"""
        import json
        from jax_deepgemm import _C
        _C.configure({str(stub_dir)!r}, ["/nonexistent/libnvrtc.so.13"])
        nvrtc = _C.runtime_info()["nvrtc"]["available"]
        print(json.dumps([nvrtc, _C.compile_fp8_gemm(**{PROBLEM!r})["compiler"]]))
    """)
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    env["DG_JIT_CACHE_DIR"] = str(tmp_path / "jit_cache")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    nvrtc, compiler = json.loads(proc.stdout.strip().splitlines()[-1])
    assert compiler.startswith("NVRTC" if nvrtc else "NVCC")


@pytest.mark.parametrize("nvcc", ["/nonexistent/bin/nvcc", "/bin/false", "no-such-nvcc-on-path"])
def test_broken_nvcc_raises_naming_the_kernel(stub_dir, nvcc, monkeypatch):
    _C.configure(str(stub_dir), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "0")
    monkeypatch.setenv("DG_JIT_NVCC_COMPILER", nvcc)
    with pytest.raises(RuntimeError) as info:
        _C.compile_fp8_gemm(**PROBLEM)
    name = _C.select_fp8_gemm_config(256, 7168, 2048, 132)
    assert "jdg_fp8_gemm_n7168_k2048_" in str(info.value)
    assert f"_bn{name['block_n']}_" in str(info.value)
    assert nvcc.split("/")[-1] in str(info.value)


@needs_compiler
@pytest.mark.parametrize("use_nvrtc", ["1", "0"])
def test_compile_error_names_kernel_and_shows_log(tmp_path, use_nvrtc, monkeypatch):
    if use_nvrtc == "1" and not have_nvrtc():
        pytest.skip("libnvrtc not found")
    if use_nvrtc == "0" and not have_nvcc():
        pytest.skip("nvcc not found")
    broken = make_include_dir(tmp_path / "broken", STUB_KERNEL + "\nthis_is_not_cuda;\n")
    _C.configure(str(broken), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", use_nvrtc)
    with pytest.raises(RuntimeError) as info:
        _C.compile_fp8_gemm(**PROBLEM)
    message = str(info.value)
    assert "jdg_fp8_gemm_n7168_k2048_" in message
    assert "this_is_not_cuda" in message  # the compiler log is part of the error
    # Failures are not cached: fixing the header makes the next compile succeed.
    (broken / "jax_deepgemm" / "fp8_gemm.cuh").write_text(STUB_KERNEL + "// fixed\n")
    _C.configure(str(broken), nvrtc_candidates())
    assert _C.compile_fp8_gemm(**PROBLEM)["cache"] == "compiled"


def test_unconfigured_or_missing_include_dir(tmp_path):
    _C.configure(str(tmp_path / "missing"), nvrtc_candidates())
    with pytest.raises(RuntimeError, match="does not exist"):
        _C.compile_fp8_gemm(**PROBLEM)


# ---------------------------------------------------------------------------------------------------------------
# The real kernel


REAL_VARIANTS = [
    dict(),
    dict(m=64, n=2112, k=7168),
    dict(m=4096, n=7168, k=2048),
    dict(m=100, n=300, k=272, c_kind=1),
    dict(m=512, n=4096, k=4096, out_f32=True, c_kind=2, b_scale_per_row=True),
    dict(m=128, n=1024, k=512, a_e5m2=True, b_e5m2=True),
]


@needs_real_kernel
@needs_nvrtc
@pytest.mark.parametrize("variant", REAL_VARIANTS, ids=lambda v: ",".join(f"{k}={x}" for k, x in v.items()) or "base")
def test_real_kernel_compiles_nvrtc(variant, monkeypatch):
    _C.configure(str(CUDA_DIR), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "1")
    r = _C.compile_fp8_gemm(**{**PROBLEM, **variant})
    assert r["cache"] == "compiled" and r["compiler"].startswith("NVRTC")
    assert r["cubin_size"] > 0


@needs_real_kernel
@needs_nvcc
@pytest.mark.parametrize("variant", REAL_VARIANTS[:3], ids=["base", "small_m", "large"])
def test_real_kernel_compiles_nvcc(variant, monkeypatch):
    _C.configure(str(CUDA_DIR), nvrtc_candidates())
    monkeypatch.setenv("DG_JIT_USE_NVRTC", "0")
    r = _C.compile_fp8_gemm(**{**PROBLEM, **variant})
    assert r["cache"] == "compiled" and r["compiler"].startswith("NVCC")


# ---------------------------------------------------------------------------------------------------------------
# The FFI handler's attribute contract, checked on the CPU backend: the instantiate stage decodes the attributes and
# compiles; execute then fails for want of a GPU stream.


@needs_compiler
def test_ffi_instantiate_decodes_attributes(stub_dir, tmp_path):
    script = textwrap.dedent(f"""
        import jax, jax.numpy as jnp
        from jax_deepgemm import _C
        jax.devices()  # the CPU client must exist before types, then targets, are registered
        _C.configure({str(stub_dir)!r}, {nvrtc_candidates()!r})
        for name, t in _C.state_types().items():
            jax.ffi.register_ffi_type(name, t, platform="cpu")
        for name, bundle in _C.registrations().items():
            jax.ffi.register_ffi_target(name, bundle, platform="cpu", api_version=1)
        M, N, K = 200, 384, 256
        args = (jnp.zeros((M, K), jnp.float8_e4m3fn), jnp.ones((2, M), jnp.float32),
                jnp.zeros((N, K), jnp.float8_e5m2), jnp.ones((2, N), jnp.float32), jnp.zeros((M, N), jnp.float32))
        call = jax.ffi.ffi_call("jdg_fp8_gemm", jax.ShapeDtypeStruct((M, N), jnp.float32))
        f = jax.jit(lambda *a: call(*a, m=M, n=N, k=K, num_sms=132, c_kind=2, arch="sm_90a", a_e5m2=False,
                                    b_e5m2=True, b_scale_per_row=True, out_f32=True))
        try:
            f(*args).block_until_ready()
        except Exception as e:
            print("ERROR:", e)
    """)
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    env.update(DG_JIT_CACHE_DIR=str(tmp_path / "jit_cache"), DG_JIT_DEBUG="1", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # Instantiate ran with the attributes above and compiled the kernel they describe ...
    assert "jdg_fp8_gemm_n384_k256_" in proc.stderr and "_e4m3_e5m2_sr_f32_c2" in proc.stderr, proc.stderr
    assert "compiled with" in proc.stderr
    # ... and execute got as far as asking for the GPU stream.
    assert "ERROR:" in proc.stdout and "stream" in proc.stdout, proc.stdout
