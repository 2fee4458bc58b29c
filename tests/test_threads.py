"""One jitted program run at the same time from several Python threads, each on its own device, gives the results
of running it sequentially: its first calls (tracing, validation, lowering, the kernels' JIT compilation on a GPU)
race each other, then repeated calls do.

On CPU the program runs on 8 CPU devices (in a subprocess when this process has fewer). On sm_90 GPUs the same
program runs the kernels, 2 threads per GPU; those tests skip, saying so, without one. The C++ compile cache under
concurrent threads is tested in test_jit_cache.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import q_lhs, q_rhs_batched, randn, seed_of

import jax_deepgemm as dg
from jax_deepgemm import runtime

THREADS = 8
ITERATIONS = 3
# Shapes no other test uses: the first calls here are the program's (and on a GPU the kernels') first compilations.
M, N, K, G = 136, 392, 520, 3


def program(x, w, rhs, sizes, a, bg, ids):
    """The differentiable dense and ragged ops (quantizing on the fly) and a contiguous grouped GEMM."""
    dot = dg.fp8_dot(x, w)
    ragged = dg.ragged_dot(x, rhs, sizes)
    contiguous = dg.m_grouped_fp8_gemm_nt_contiguous(a, bg, ids, out_dtype=jnp.float32)
    return dot, ragged, contiguous


def program_with_grads(x, w, rhs, sizes, a, bg, ids):
    """`program` and the FP8 backward passes of fp8_dot and ragged_dot (GPU only: on CPU it costs compile time)."""
    loss = lambda x, w, rhs: jnp.sum(dg.fp8_dot(x, w) ** 2) + jnp.sum(dg.ragged_dot(x, rhs, sizes) ** 2)  # noqa: E731
    return program(x, w, rhs, sizes, a, bg, ids), jax.grad(loss, argnums=(0, 1, 2))(x, w, rhs)


def inputs(i: int, device):
    """Different data per thread (so that a result landing in the wrong thread is caught), on `device`."""
    x = randn(seed_of("thr-x", i), (M, K))
    w = randn(seed_of("thr-w", i), (K, N))
    rhs = randn(seed_of("thr-rhs", i), (G, K, N))
    sizes = jnp.asarray([40 + i, 0, 90 - i], jnp.int32)
    a = q_lhs(randn(seed_of("thr-a", i), (256, K)))
    bg = q_rhs_batched(randn(seed_of("thr-bg", i), (G, N, K)))
    ids = jnp.asarray(np.repeat([i % G, -1], 128).astype(np.int32))
    return jax.device_put((x, w, rhs, sizes, a, bg, ids), device)


def run_concurrently(devices, prog=program) -> None:
    """THREADS threads, thread t on devices[t % len(devices)], released together into the program's first call;
    every result equals the sequential one bit for bit and stays on the thread's device."""
    fn = jax.jit(prog)
    args = [inputs(t, devices[t % len(devices)]) for t in range(THREADS)]
    barrier = threading.Barrier(THREADS)
    results: list = [None] * THREADS
    errors: list[BaseException] = []

    def worker(t):
        try:
            barrier.wait(timeout=120)
            outs = [fn(*args[t]) for _ in range(ITERATIONS)]
            results[t] = jax.tree.map(np.asarray, outs)
            for leaf in jax.tree.leaves(outs[-1]):
                assert leaf.devices() == {devices[t % len(devices)]}
        except BaseException as e:  # noqa: BLE001  (reported by the main thread)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=900)
    assert not errors, errors
    for t in range(THREADS):
        expected = jax.tree.map(np.asarray, fn(*args[t]))
        for got in results[t]:
            jax.tree.map(np.testing.assert_array_equal, got, expected)
        assert all(np.all(np.isfinite(leaf)) for leaf in jax.tree.leaves(expected))


# ---------------------------------------------------------------- CPU devices

def test_threads_on_8_cpu_devices(tmp_path):
    cpus = jax.devices("cpu")
    if len(cpus) >= 8:
        run_concurrently(cpus[:8])
        return
    # XLA makes extra CPU devices only when asked before its CPU backend starts: ask in a fresh process.
    tests = Path(__file__).resolve().parent
    script = f"import sys; sys.path.insert(0, {str(tests)!r}); import test_threads; test_threads.run_on_8_cpus()"
    env = {**os.environ, "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} "
                                      "--xla_force_host_platform_device_count=8".strip(),
           "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "8 CPU devices: ok" in proc.stdout


def run_on_8_cpus() -> None:
    cpus = jax.devices("cpu")
    assert len(cpus) >= 8, cpus
    run_concurrently(cpus[:8])
    print("8 CPU devices: ok")


# ---------------------------------------------------------------- sm_90 GPUs

_SM90 = [d for d in runtime.cuda_devices() if runtime.is_sm90(d)]
needs_sm90 = pytest.mark.skipif(not _SM90, reason="needs an sm_90 GPU (H100/H200); none is present here")


@pytest.mark.gpu
@needs_sm90
def test_threads_on_gpus():
    """The kernels: 8 threads over the GPUs (2 per GPU on 4, all 8 on one), their first calls compiling the kernels
    at the same time."""
    assert "jdg_fp8_gemm" in jax.jit(program_with_grads).lower(*inputs(0, _SM90[0])).as_text()
    run_concurrently(_SM90, program_with_grads)


@pytest.mark.gpu
@needs_sm90
def test_threads_on_one_gpu_with_a_fresh_kernel_cache(tmp_path, monkeypatch):
    """8 threads on one GPU whose kernels are not in any cache yet (a new cache directory, shapes of their own):
    the compilations they trigger together leave one valid entry per kernel."""
    monkeypatch.setenv("DG_JIT_CACHE_DIR", str(tmp_path / "jit_cache"))
    monkeypatch.setattr(sys.modules[__name__], "M", 72)
    monkeypatch.setattr(sys.modules[__name__], "K", 392)
    run_concurrently(_SM90[:1])
    ext = runtime.extension()
    entries = sorted((tmp_path / "jit_cache" / "cache").iterdir())
    assert entries, "no kernel was compiled into the fresh cache"
    for entry in entries:
        assert ext.verify_cache_entry(str(entry)) == "", entry
