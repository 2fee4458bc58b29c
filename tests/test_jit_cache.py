"""The JIT's kernel caches under stress, without a GPU: the on-disk cache shared by processes (hits, invalidation,
damaged entries, unusable directories, 8 processes compiling into one empty cache at once) and the in-memory cache
shared by threads (one compilation per kernel however many threads ask at once).

A cache entry is valid when `_C.verify_cache_entry` finds its cubin matching the size and checksum in its
kernel.meta, and a fresh process loads it ('disk').
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from jit_support import (  # noqa: F401  (isolated and stub_dir are fixtures)
    _C,
    PROBLEM,
    STUB_KERNEL,
    clean_env,
    compile_in_subprocess,
    compile_script,
    isolated,
    make_include_dir,
    needs_compiler,
    nvrtc_candidates,
    stub_dir,
)

# Three kernels (different N / K / options give different cache entries).
PROBLEMS = [PROBLEM, {**PROBLEM, "n": 4096}, {**PROBLEM, "k": 512, "out_f32": True}]


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "cache").iterdir())


def assert_valid_cache(cache: Path, count: int) -> None:
    """`count` entries, each intact, and no temporary directory left behind."""
    found = entries(cache)
    assert len(found) == count, found
    for entry in found:
        assert _C.verify_cache_entry(str(entry)) == "", entry
    assert not list((cache / "tmp").iterdir())


def warnings_in(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "jax_deepgemm: warning" in line]


# ---------------------------------------------------------------------------------------------------------------
# One process at a time


@needs_compiler
def test_disk_hit_in_new_process(stub_dir, tmp_path):
    env = {"DG_JIT_CACHE_DIR": str(tmp_path / "jit_cache")}
    (first,), _ = compile_in_subprocess(stub_dir, env, [PROBLEM])
    (second,), stderr = compile_in_subprocess(stub_dir, env, [PROBLEM])
    assert first["cache"] == "compiled"
    assert second["cache"] == "disk" and not warnings_in(stderr)
    assert second["digest"] == first["digest"] and second["cubin_size"] == first["cubin_size"]
    assert_valid_cache(tmp_path / "jit_cache", 1)


@needs_compiler
def test_header_change_invalidates_cache(tmp_path):
    include = make_include_dir(tmp_path / "inc", STUB_KERNEL)
    env = {"DG_JIT_CACHE_DIR": str(tmp_path / "jit_cache")}
    (first,), _ = compile_in_subprocess(include, env, [PROBLEM])
    (include / "jax_deepgemm" / "extra.cuh").write_text("// a new header changes every key\n")
    (second,), _ = compile_in_subprocess(include, env, [PROBLEM])
    assert second["cache"] == "compiled" and second["digest"] != first["digest"]


def damage_entry(entry: Path, damage: str) -> None:
    cubin, meta = entry / "kernel.cubin", entry / "kernel.meta"
    good = cubin.read_bytes()
    if damage == "truncate":
        cubin.write_bytes(good[: len(good) // 2])
    elif damage == "flip":  # same size, one byte in the middle changed: only the checksum can tell
        cubin.write_bytes(good[:100] + bytes([good[100] ^ 0xFF]) + good[101:])
    elif damage == "empty":
        cubin.write_bytes(b"")
    elif damage == "delete_cubin":
        cubin.unlink()
    elif damage == "delete_meta":
        meta.unlink()
    elif damage == "garbage_meta":
        meta.write_bytes(os.urandom(200))
    else:
        raise AssertionError(damage)


@needs_compiler
@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "delete_cubin", "delete_meta", "garbage_meta"])
def test_damaged_entry_is_rebuilt_with_one_warning(stub_dir, tmp_path, damage):
    cache = tmp_path / "jit_cache"
    env = {"DG_JIT_CACHE_DIR": str(cache)}
    (first,), _ = compile_in_subprocess(stub_dir, env, [PROBLEM])
    (entry,) = entries(cache)
    good = (entry / "kernel.cubin").read_bytes()
    damage_entry(entry, damage)
    assert _C.verify_cache_entry(str(entry)) != ""

    (second, again), stderr = compile_in_subprocess(stub_dir, env, [PROBLEM, PROBLEM])
    assert (second["cache"], again["cache"]) == ("compiled", "memory")
    (warning,) = warnings_in(stderr)
    assert "damaged" in warning and "rebuilding" in warning and entry.name in warning
    assert (entry / "kernel.cubin").read_bytes() == good  # the same compiler rebuilt the same image
    assert_valid_cache(cache, 1)
    (third,), stderr = compile_in_subprocess(stub_dir, env, [PROBLEM])
    assert third["cache"] == "disk" and not warnings_in(stderr)


def unusable_dir(tmp_path: Path, how: str) -> str:
    if how == "parent_is_a_file":  # fails for root too
        blocker = tmp_path / "not_a_dir"
        blocker.write_text("a file where the cache directory should be")
        return str(blocker / "cache")
    if how == "in_procfs":  # nobody, root included, can create directories there
        if not Path("/proc/self").is_dir():
            pytest.skip("no procfs on this system")
        return "/proc/jax_deepgemm_cache"
    if how == "read_only":
        path = tmp_path / "read_only"
        path.mkdir()
        path.chmod(0o555)
        if os.access(path, os.W_OK):
            pytest.skip("this user (root?) can write to a read-only directory")
        return str(path)
    raise AssertionError(how)


@needs_compiler
@pytest.mark.parametrize("how", ["parent_is_a_file", "in_procfs", "read_only"])
def test_unusable_cache_dir_falls_back_to_memory_with_one_warning(stub_dir, tmp_path, how):
    env = {"DG_JIT_CACHE_DIR": unusable_dir(tmp_path, how)}
    results, stderr = compile_in_subprocess(stub_dir, env, [PROBLEM, PROBLEM, PROBLEMS[1]])
    assert [r["cache"] for r in results] == ["compiled", "memory", "compiled"]
    (warning,) = warnings_in(stderr)
    assert env["DG_JIT_CACHE_DIR"] in warning and "in memory only" in warning


@needs_compiler
def test_missing_cache_dir_is_created(stub_dir, tmp_path):
    cache = tmp_path / "not" / "there" / "yet"
    results, stderr = compile_in_subprocess(stub_dir, {"DG_JIT_CACHE_DIR": str(cache)}, [PROBLEM])
    assert results[0]["cache"] == "compiled" and not warnings_in(stderr)
    assert_valid_cache(cache, 1)


@needs_compiler
def test_read_only_cache_still_serves_its_entries(stub_dir, tmp_path):
    cache = tmp_path / "jit_cache"
    compile_in_subprocess(stub_dir, {"DG_JIT_CACHE_DIR": str(cache)}, [PROBLEM])
    for path in [cache, *cache.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        if os.access(cache / "cache", os.W_OK):
            pytest.skip("this user (root?) can write to a read-only directory")
        results, stderr = compile_in_subprocess(stub_dir, {"DG_JIT_CACHE_DIR": str(cache)}, [PROBLEM])
        assert results[0]["cache"] == "disk" and not warnings_in(stderr)
    finally:
        for path in [cache, *cache.rglob("*")]:
            path.chmod(0o755)


# ---------------------------------------------------------------------------------------------------------------
# Many processes at once


def run_at_once(include_dir: Path, cache: Path, problem_lists: list[list[dict]], tmp_path: Path) -> list:
    """One process per problem list, released together once all have loaded the extension; returns their results
    (each a list of compile results), after checking that every process succeeded."""
    go = tmp_path / "go"
    procs = []
    for i, problems in enumerate(problem_lists):
        ready = tmp_path / f"ready{i}"
        wait = f"""
            import os, time
            open({str(ready)!r}, "w").close()
            while not os.path.exists({str(go)!r}):
                time.sleep(0.001)
        """
        script = compile_script(include_dir, problems, before=wait)
        procs.append(subprocess.Popen([sys.executable, "-c", script], env=clean_env(DG_JIT_CACHE_DIR=str(cache)),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path))
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready{i}").exists() for i in range(len(procs))) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        results.append((json.loads(out.strip().splitlines()[-1]), err))
    return results


@needs_compiler
def test_eight_processes_compile_into_one_empty_cache(stub_dir, tmp_path):
    """8 processes ask for the same 3 kernels (in different orders) at the same moment: all succeed with identical
    kernels, and the cache holds exactly one intact entry per kernel."""
    cache = tmp_path / "jit_cache"
    orders = [PROBLEMS[i % 3:] + PROBLEMS[: i % 3] for i in range(8)]
    results = run_at_once(stub_dir, cache, orders, tmp_path)
    by_kernel: dict[str, list[dict]] = {}
    for compiled, stderr in results:
        assert not warnings_in(stderr), stderr
        for r in compiled:
            by_kernel.setdefault(r["kernel"], []).append(r)
    assert len(by_kernel) == 3
    for kernel, rs in by_kernel.items():
        assert len(rs) == 8
        assert len({(r["digest"], r["cubin_size"]) for r in rs}) == 1, kernel
        assert {r["cache"] for r in rs} <= {"compiled", "disk"} and any(r["cache"] == "compiled" for r in rs)
    assert_valid_cache(cache, 3)
    again, _ = compile_in_subprocess(stub_dir, {"DG_JIT_CACHE_DIR": str(cache)}, PROBLEMS)
    assert [r["cache"] for r in again] == ["disk"] * 3


@needs_compiler
def test_eight_processes_meet_one_damaged_entry(stub_dir, tmp_path):
    """8 processes find the same damaged entry at once: each rebuilds or loads a good copy, and one intact entry
    remains."""
    cache = tmp_path / "jit_cache"
    compile_in_subprocess(stub_dir, {"DG_JIT_CACHE_DIR": str(cache)}, [PROBLEM])
    (entry,) = entries(cache)
    damage_entry(entry, "flip")
    results = run_at_once(stub_dir, cache, [[PROBLEM]] * 8, tmp_path)
    assert {r[0]["cache"] for r, _ in results} <= {"compiled", "disk"}
    assert_valid_cache(cache, 1)


# ---------------------------------------------------------------------------------------------------------------
# Many threads at once (compile_fp8_gemm releases the GIL while it builds)


@needs_compiler
def test_threads_compile_each_kernel_once(tmp_path):
    """8 threads ask for the same 3 kernels at the same moment: each kernel is compiled once in the process, the
    other requests wait for it and get the same image from memory."""
    # Headers of their own: no kernel of this test is in the process's memory cache yet.
    include = make_include_dir(tmp_path / "inc", STUB_KERNEL + f"// {tmp_path}\n")
    _C.configure(str(include), nvrtc_candidates())
    barrier = threading.Barrier(8)
    results: list[dict] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def worker(i):
        try:
            barrier.wait(timeout=60)
            for problem in PROBLEMS[i % 3:] + PROBLEMS[: i % 3]:
                r = _C.compile_fp8_gemm(**problem)
                with lock:
                    results.append(r)
        except BaseException as e:  # noqa: BLE001  (reported by the main thread)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    assert len(results) == 24
    for kernel in {r["kernel"] for r in results}:
        rs = [r for r in results if r["kernel"] == kernel]
        assert sorted(r["cache"] for r in rs) == ["compiled"] + ["memory"] * 7, kernel
        assert len({(r["digest"], r["cubin_size"]) for r in rs}) == 1
    assert_valid_cache(tmp_path / "jit_cache", 3)
