"""`jax_deepgemm.warmup`: the kernels a program (or a jax.export artifact) will take, compiled ahead of time without
a GPU. Its GEMMs must be found with the problems the lowering gives them, backward passes included, and compiled
with the configuration the handler picks; on an sm_90 GPU, running the warmed program compiles nothing more."""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
from jax_deepgemm import aot, runtime

S = jax.ShapeDtypeStruct
BF16, F32 = jnp.bfloat16, jnp.float32


def _have_compiler():
    ext = runtime.extension()
    if ext is None:
        return False
    info = ext.runtime_info()
    return info["nvrtc"]["available"] or info["nvcc"]["available"]


pytestmark = pytest.mark.skipif(not _have_compiler(), reason="no NVRTC or NVCC here: nothing compiles")
_SM90 = [d for d in runtime.cuda_devices() if runtime.is_sm90(d)]


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DG_JIT_CACHE_DIR", str(tmp_path / "jit_cache"))
    return tmp_path / "jit_cache"


def _dot_grad(x, w):
    return jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w).astype(F32) ** 2), argnums=(0, 1))(x, w)


def _gemms(results):
    return sorted((r["problem"]["grouping"], r["problem"]["m"], r["problem"]["n"], r["problem"]["k"])
                  for r in results if r["target"] == "jdg_fp8_gemm")


def _expected_kernel(m, n, k, per_row=False, out_f32=False, grouping="dense", g=1, num_sms=None, hbm_gbs=None):
    ext = runtime.extension()
    sms = runtime.DEFAULT_NUM_SMS if num_sms is None else num_sms
    return ext.compile_fp8_gemm(runtime.ARCH, m, n, k, sms, False, False, per_row, out_f32, 0, grouping, g, 0,
                                hbm_gbs or 0)["kernel"]


@pytest.mark.skipif(bool(runtime.cuda_devices()), reason="checks the no-GPU defaults (132 SMs, bandwidth unknown)")
def test_fp8_dot_gradient_warms_its_three_gemms_and_quantizations():
    args = S((520, 1040), BF16), S((1040, 776), F32)  # (shapes no other test compiles: this process's kernels)
    results = dg.warmup(_dot_grad, *args)
    # forward x @ w, the input gradient g @ w^T, the weight gradient x^T @ g (1D1D: per-row scales, f32 out); K as
    # the kernels see it, padded to 16 bytes
    assert _gemms(results) == [("dense", 520, 776, 1040), ("dense", 520, 1040, 784), ("dense", 1040, 776, 528)]
    gemms = [r for r in results if r["target"] == "jdg_fp8_gemm"]
    assert [r["kernel"] for r in gemms] == [_expected_kernel(520, 776, 1040), _expected_kernel(520, 1040, 784),
                                            _expected_kernel(1040, 776, 528, per_row=True, out_f32=True)]
    assert all(r["cache"] == "compiled" for r in gemms), gemms  # a fresh cache
    quantize = [r for r in results if r["target"] == "jdg_fp8_quantize_t"]
    assert quantize and len({r["kernel"] for r in results}) == len(results)  # each kernel once
    again = dg.warmup(_dot_grad, *args)
    assert [r["kernel"] for r in again] == [r["kernel"] for r in results]
    assert all(r["cache"] == "memory" for r in again)


def test_ragged_dot_gradient_finds_the_grouped_gemms():
    g = jax.grad(lambda x, w, s: jnp.sum(dg.ragged_dot(x, w, s).astype(F32) ** 2), argnums=(0, 1))
    results = dg.warmup(g, S((1000, 512), BF16), S((4, 512, 256), BF16), S((4,), jnp.int32))
    groupings = {grouping for grouping, *_ in _gemms(results)}
    assert groupings == {"ragged", "k_grouped"}, _gemms(results)
    assert ("ragged", 1000, 256, 512) in _gemms(results)  # the forward


def test_an_exported_artifact_warms_what_its_function_does():
    args = (S((256, 512), BF16), S((512, 384), F32))
    exported = jax.export.export(jax.jit(_dot_grad), platforms=("cpu", "cuda"),
                                 disabled_checks=dg.export_disabled_checks())(*args)
    from_artifact = dg.warmup(jax.export.deserialize(exported.serialize()))
    assert [r["kernel"] for r in from_artifact] == [r["kernel"] for r in dg.warmup(_dot_grad, *args)]
    with pytest.raises(TypeError, match="an Exported program takes no example arguments"):
        dg.warmup(exported, *args)


def test_planning_for_another_gpu_and_the_sms_cap(restore_num_sms):
    """num_sms / hbm_gbs plan for a GPU other than this one (an H200's bandwidth splits this shape's K, as the CLI
    test sees); a set_num_sms cap in force when the program is lowered caps them, as the handler caps the GPU's."""
    fn = lambda a, b: dg.fp8_gemm_nt(a, b)  # noqa: E731
    args = ((S((128, 7168), jnp.float8_e4m3fn), S((128, 56), F32)), (S((4096, 7168), jnp.float8_e4m3fn),
                                                                     S((32, 56), F32)))
    (h200,) = dg.warmup(fn, *args, num_sms=132, hbm_gbs=4917)
    assert h200["config"]["split_k"] == 2 and h200["kernel"].endswith("_sk2")
    assert h200["kernel"] == _expected_kernel(128, 4096, 7168, num_sms=132, hbm_gbs=4917)
    dg.set_num_sms(66)  # (the same function: set_num_sms has JAX lower it again)
    (capped,) = dg.warmup(fn, *args, num_sms=132, hbm_gbs=4917)
    assert capped["problem"]["num_sms"] == 66
    assert capped["kernel"] == _expected_kernel(128, 4096, 7168, num_sms=66, hbm_gbs=4917)


def test_programs_without_our_calls_and_bad_programs():
    assert dg.warmup(lambda x: x @ x, S((8, 8), F32)) == []
    with pytest.raises(TypeError, match="program must be a function or a jax.export.Exported, got int"):
        dg.warmup(3)
    for bad in ({"num_sms": 0}, {"num_sms": 2.5}, {"num_sms": True}, {"hbm_gbs": -1}):
        with pytest.raises(ValueError, match=rf"warmup: {next(iter(bad))} must be None or an int"):
            dg.warmup(lambda x: x @ x, S((8, 8), F32), **bad)


@pytest.mark.skipif(len(jax.devices()) < 2, reason="needs 2 devices (conftest gives the CPU 8)")
def test_a_jit_over_sharded_operands_says_what_to_warm_instead():
    mesh = jax.make_mesh((2,), ("x",), devices=jax.devices()[:2])
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
    x = jax.device_put(np.ones((256, 512), np.float32), sharding)
    w = jax.device_put(np.ones((512, 256), np.float32), jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec()))
    with pytest.raises(ValueError, match="partitioned over its devices .* shard_map form"):
        dg.warmup(jax.jit(dg.fp8_dot), x, w)
    # beside a shard_map region, whose calls are local (and warmed): a warning for the others
    local = jax.shard_map(lambda x: dg.fp8_dot(x, np.ones((512, 128), np.float32)), mesh=mesh,
                          in_specs=jax.sharding.PartitionSpec("x"), out_specs=jax.sharding.PartitionSpec("x"))
    with pytest.warns(RuntimeWarning, match="some of the program's calls are partitioned"):
        results = dg.warmup(jax.jit(lambda x, w: (dg.fp8_dot(x, w), local(x))), x, w)
    assert _gemms(results) == [("dense", 128, 128, 512)]


def test_the_cli_warms_an_exported_artifact(tmp_path, cache_dir):
    args = (S((256, 512), BF16), S((512, 384), F32))
    exported = jax.export.export(jax.jit(_dot_grad), platforms=("cuda",),
                                 disabled_checks=dg.export_disabled_checks())(*args)
    (tmp_path / "step.bin").write_bytes(exported.serialize())
    (tmp_path / "junk.bin").write_bytes(b"not an artifact")
    env = dict(os.environ, DG_JIT_CACHE_DIR=str(cache_dir))
    run = lambda *a: subprocess.run([sys.executable, "-m", "jax_deepgemm", "warmup", *a], cwd=tmp_path,  # noqa
                                    env=env, capture_output=True, text=True, timeout=600)
    done = run("--exported", "step.bin")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("jdg_fp8_gemm_") == 3 and "jdg_fp8_quantize" in done.stdout, done.stdout
    bad = run("--exported", "junk.bin")
    assert bad.returncode == 2 and "junk.bin is not a serialized jax.export artifact" in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.gpu
@pytest.mark.skipif(not _SM90, reason="needs an sm_90 GPU (H100/H200); none is present here")
def test_the_warmed_program_compiles_nothing_more(cache_dir):
    """On the GPU: after warmup, running the program (a fresh jit) finds every kernel in the cache."""
    x = jax.random.normal(jax.random.key(0), (512, 1024), BF16)
    w = jax.random.normal(jax.random.key(1), (1024, 768), F32)
    dg.warmup(_dot_grad, x, w)
    entries = sorted(os.listdir(cache_dir / "cache"))
    jax.block_until_ready(jax.jit(_dot_grad)(x, w))
    assert sorted(os.listdir(cache_dir / "cache")) == entries
