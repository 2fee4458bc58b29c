"""The command line, run as a subprocess: `python -m jax_deepgemm info | demo | warmup`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

import pytest

from jax_deepgemm import __version__, runtime

NUMBER = r"([0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)"


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The installed package's CLI, run from an empty directory (so no source tree can shadow it)."""
    with tempfile.TemporaryDirectory() as cwd:
        return subprocess.run([sys.executable, "-m", "jax_deepgemm", *args], cwd=cwd, env=dict(os.environ),
                              capture_output=True, text=True, timeout=timeout)


def test_info():
    r = run_cli("info")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert f"jax_deepgemm {__version__}" in out
    assert re.search(r"^python 3\.\d+.*, jax \d+\.\d+", out, re.M)
    assert re.search(r"^device 0: \w+", out, re.M)
    assert re.search(r"^extension: (loaded|unavailable: .+)", out, re.M)
    assert re.search(r"^kernels: (available|not used \(.+\))", out, re.M)
    if not runtime.cuda_devices():
        assert "kernels: not used (no CUDA GPU" in out


def test_demo_prints_accuracy_and_timings():
    r = run_cli("demo")
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    assert "FP8 MoE layer demo" in out
    assert re.search(r"tokens=\d+ hidden=\d+ intermediate=\d+ experts=\d+ top_k=\d+", out)
    # accuracy: one row per compared quantity, fp8 then bf16 calc_diff against float32
    assert "accuracy" in out
    rows = dict((m.group(1), (float(m.group(2)), float(m.group(3))))
                for m in re.finditer(rf"^\s+(output|grad_\w+)\s+{NUMBER}\s+{NUMBER}\s*$", out, re.M))
    assert set(rows) == {"output", "grad_x", "grad_gate_up", "grad_down", "grad_out"}, out
    for name, (fp8, bf16) in rows.items():
        # FP8 error is real (not a silent float path) but small; bf16 is far more accurate
        assert 0 < fp8 < 2e-2, (name, fp8)
        assert 0 <= bf16 < 1e-3, (name, bf16)
        assert bf16 < fp8, (name, fp8, bf16)
    # timings: forward and forward+backward for both paths, positive milliseconds
    assert "timings" in out
    timings = re.findall(rf"^\s+(fp8|bf16)\s+forward\s+{NUMBER}\s+forward\+backward\s+{NUMBER}\s*$", out, re.M)
    assert {t[0] for t in timings} == {"fp8", "bf16"}, out
    for _, fwd, fwd_bwd in timings:
        assert float(fwd) > 0 and float(fwd_bwd) > 0


def test_warmup_without_work_or_extension():
    r = run_cli("warmup")
    if runtime.extension() is None:
        assert r.returncode == 1
        assert "warmup needs the compiled extension" in r.stderr
    else:
        assert r.returncode == 2
        assert "nothing to compile" in r.stderr


@pytest.mark.parametrize("args", [(), ("bogus",), ("warmup", "--num-sms", "many"), ("warmup", "--hbm-gbs", "fast"),
                                  ("bench", "--flush-mb", "64"),
                                  ("bench", "--flush-mb", "lots"), ("bench", "--grouped", "masked,dense"),
                                  ("bench", "--flush-by", "erase")])
def test_bad_usage_exits_2(args):
    r = run_cli(*args, timeout=60)
    assert r.returncode == 2
    assert "usage:" in r.stderr


def test_help():
    r = run_cli("--help", timeout=60)
    assert r.returncode == 0
    for command in ("demo", "info", "warmup"):
        assert command in r.stdout


def _have_nvrtc():
    ext = runtime.extension()
    return ext is not None and ext.runtime_info()["nvrtc"]["available"]


@pytest.mark.skipif(not _have_nvrtc(), reason="libnvrtc not found (pip install nvidia-cuda-nvrtc): nothing compiles")
def test_warmup_compiles_the_grouped_kernels(tmp_path):
    env = dict(os.environ, DG_JIT_CACHE_DIR=str(tmp_path), DG_JIT_USE_NVRTC="1")
    args = ["--num-sms", "132", "--contiguous", "4,1024,256,512", "--ragged", "4,1000,256,500",
            "--masked", "2,512,256,512,128", "--k-grouped", "4,256,384,1024",
            "--hbm-gbs", "4917", "--gemm", "128,4096,7168"]  # an H200's bandwidth: this shape splits K there
    with tempfile.TemporaryDirectory() as cwd:
        r = subprocess.run([sys.executable, "-m", "jax_deepgemm", "warmup", *args], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    for kernel in ("contiguous_n256_k512", "ragged_n256_k512", "masked_n256_k512", "k_grouped_n384_k1024"):
        assert f"jdg_fp8_gemm_{kernel}_" in r.stdout, r.stdout
    assert re.search(r"jdg_fp8_gemm_n4096_k7168_bm128_bn64_\w*_sk2\b", r.stdout), r.stdout
    assert r.stdout.count("k_grouped") >= 3 and re.search(r"_c2(_\w+)? ", r.stdout)  # with and without C,
    assert re.search(r"jdg_fp8_gemm_k_grouped_n384_k1024_\w*_bf16_c0", r.stdout), r.stdout  # and bf16 out
    bad = run_cli("warmup", "--masked", "2,512,256", timeout=60)
    assert bad.returncode == 2 and "--masked takes 5" in bad.stderr
    bad = run_cli("warmup", "--k-grouped", "2,64,64,100", timeout=60)  # K not a multiple of 128: no kernel takes it
    assert bad.returncode == 2 and "warmup: jdg_fp8_gemm: k must be" in bad.stderr and "Traceback" not in bad.stderr
    bad = run_cli("warmup", "--hbm-gbs", "-5", "--gemm", "64,256,512", timeout=60)
    assert bad.returncode == 2 and "hbm_gbs must be >= 0" in bad.stderr and "Traceback" not in bad.stderr


def test_bench_grouped_kinds_see_the_same_inputs(monkeypatch):
    """`bench --grouped masked` must time the masked rows on the masked_m that the whole table draws."""
    from jax_deepgemm import bench_grouped

    def fake(kind):
        def row(g, *rest):
            rng = rest[-1]
            return {"kind": kind, "draws": list(rng.uniform(0.7, 1.3, size=g))}
        return row

    monkeypatch.setattr(bench_grouped, "m_grouped_rows", lambda *a: [fake("contiguous")(*a)])
    monkeypatch.setattr(bench_grouped, "masked_row", fake("masked"))
    monkeypatch.setattr(bench_grouped, "k_grouped_row", fake("k-grouped"))
    every = bench_grouped.grouped_rows(20, lambda row: None)
    masked = bench_grouped.grouped_rows(20, lambda row: None, ("masked",))
    assert len(masked) == len(bench_grouped.MASKED_SHAPES)
    assert masked == [row for row in every if row["kind"] == "masked"]


def test_bench_grouped_rows_record_their_draw(monkeypatch):
    """Each grouped row names the group sizes it was timed on, and its TFLOPS count exactly those rows (or K)."""
    import numpy as np

    from jax_deepgemm import bench_grouped

    monkeypatch.setattr(bench_grouped, "_timed", lambda fn, args, iters: {"us": 10.0, "wall_us": 12.0})
    monkeypatch.setattr(bench_grouped, "_baseline_us", lambda fn, args, iters: 20.0)
    rng = np.random.default_rng(3)
    contiguous, ragged = bench_grouped.m_grouped_rows(3, 200, 128, 256, 20, rng)
    masked = bench_grouped.masked_row(2, 300, 128, 256, 20, rng)
    k_grouped = bench_grouped.k_grouped_row(3, 64, 128, 512, 20, rng)
    n, k = 128, 256
    for row in (contiguous, ragged, masked):
        g, nominal = row["shape"][:2]
        assert len(row["draw"]) == g and all(0.7 * nominal - 1 <= r <= 1.3 * nominal for r in row["draw"]), row
        assert row["tflops"] == round(2.0 * sum(row["draw"]) * n * k / 10.0 / 1e6, 1)
    assert contiguous["draw"] == ragged["draw"]  # the same token counts, padded or not
    assert len(k_grouped["draw"]) == 3 and all(s % 128 == 0 and 256 <= s <= 768 for s in k_grouped["draw"])
    assert k_grouped["tflops"] == round(2.0 * 64 * 128 * sum(k_grouped["draw"]) / 10.0 / 1e6, 1)
    assert all(isinstance(v, int) for row in (contiguous, masked, k_grouped) for v in row["draw"])  # JSON-ready
