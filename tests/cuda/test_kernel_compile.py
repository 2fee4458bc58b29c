"""CI check that the FP8 GEMM kernel source compiles for sm_90a with NVRTC (no GPU needed).

Runs the quick sweep of tests/cuda/compile_check.py (about a dozen configurations, one rejected on purpose by the
shared-memory static_assert); the full sweep is `python3 tests/cuda/compile_check.py`. Skipped when no NVRTC
library is found (pip install nvidia-cuda-nvrtc).
"""

from __future__ import annotations

import importlib.util
import os

import pytest

_spec = importlib.util.spec_from_file_location(
    "jdg_compile_check", os.path.join(os.path.dirname(__file__), "compile_check.py"))
cc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cc)


def _have_nvrtc():
    try:
        cc.find_nvrtc()
        return True
    except SystemExit:
        return False


pytestmark = pytest.mark.skipif(not _have_nvrtc(), reason="libnvrtc not found (pip install nvidia-cuda-nvrtc)")

JOBS = cc.sweep(quick=True)


@pytest.mark.parametrize("job", JOBS, ids=[cc.cfg_name(c) + ("" if ok else "_rejected") for c, ok in JOBS])
def test_fp8_gemm_kernel_compiles(job):
    res = cc.run_one(job)
    assert res["ok"] == res["expect_ok"], res["log"][-4000:]
    assert not res["problems"], "\n".join(res["problems"])
    if res["expect_ok"]:
        assert res.get("sass_ok", True), res.get("sass")
