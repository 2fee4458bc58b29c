"""CI check that every variant of the quantization kernels (fp8_quantize.cuh: transposing and rowwise) compiles for
sm_90a with NVRTC through the runtime's own JIT (no GPU needed), without local-memory spills. Skipped when the
extension or NVRTC is unavailable."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys

import pytest

from jax_deepgemm import runtime

_ext = runtime.extension()
pytestmark = pytest.mark.skipif(_ext is None or not _ext.runtime_info()["nvrtc"]["available"],
                                reason="the extension or libnvrtc is unavailable (pip install nvidia-cuda-nvrtc)")

# In a child process (isolated: the installed package, not the source tree): DG_JIT_PTXAS_VERBOSE is read when the
# extension compiles, and a fresh cache directory makes it compile (ptxas's statistics are only in a compile's log).
_CHILD = """
import json, sys
from jax_deepgemm import runtime
out = runtime.extension().compile_fp8_quantize("sm_90a", *json.loads(sys.argv[1]))
print(json.dumps({"kernel": out["kernel"], "cache": out["cache"], "log": out["log"]}))
"""


# (in_f32, per_block, block_map, untransposed, row_map, rowwise): every combination the host accepts (untransposed
# only with per_block, without either map; rowwise with none of the others but a row map)
_VARIANTS = [(f32, blocks, block_map, False, row_map, False)
             for f32, blocks, block_map, row_map in itertools.product([False, True], repeat=4)]
_VARIANTS += [(False, True, False, True, False, False), (True, True, False, True, False, False)]
_VARIANTS += [(f32, False, False, False, row_map, True) for f32, row_map in itertools.product([False, True], repeat=2)]


@pytest.mark.parametrize("in_f32,per_block,block_map,untransposed,row_map,rowwise", _VARIANTS)
def test_quantize_kernel_compiles_without_spills(in_f32, per_block, block_map, untransposed, row_map, rowwise,
                                                 tmp_path):
    import json

    env = dict(os.environ, DG_JIT_PTXAS_VERBOSE="1", DG_JIT_CACHE_DIR=str(tmp_path))
    variant = json.dumps([in_f32, per_block, block_map, untransposed, row_map, rowwise])
    proc = subprocess.run([sys.executable, "-I", "-c", _CHILD, variant], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["cache"] == "compiled"
    if rowwise:
        kind = ("f32" if in_f32 else "bf16") + ("_gather" if row_map else "")
        assert out["kernel"] == "jdg_fp8_quantize_rows_" + kind
    else:
        assert out["kernel"] == ("jdg_fp8_quantize_t_" + ("f32" if in_f32 else "bf16") +
                                 ("_blocks" if per_block else "_rows") + ("_gather" if row_map else "") +
                                 ("_map" if block_map else "") +
                                 ("_both" if untransposed else ""))
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", out["log"])
    assert spills, out["log"]  # ptxas's statistics are there
    assert all(s == ("0", "0") for s in spills), out["log"]


@pytest.mark.parametrize("block_map,row_map", [(True, False), (False, True)])
def test_untransposed_with_a_map_is_refused(block_map, row_map):
    """The host refuses what the kernel's #error would: x's own layout needs x's rows as they are."""
    with pytest.raises(ValueError, match="untransposed needs per_block, no block map and no row map"):
        _ext.compile_fp8_quantize("sm_90a", False, True, block_map, True, row_map)


@pytest.mark.parametrize("per_block,block_map,untransposed", [(True, False, False), (False, True, False),
                                                              (True, False, True)])
def test_rowwise_with_another_mode_is_refused(per_block, block_map, untransposed):
    """The rowwise kernel has none of the transposing one's modes but the row map: the host refuses them by name."""
    with pytest.raises(ValueError, match="rowwise needs no per_block, no block map and no untransposed"):
        _ext.compile_fp8_quantize("sm_90a", False, per_block, block_map, untransposed, False, True)


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_swiglu_kernels_compile_without_spills(tmp_path, direction):
    import json

    env = dict(os.environ, DG_JIT_PTXAS_VERBOSE="1", DG_JIT_CACHE_DIR=str(tmp_path))
    child = _CHILD.replace('*json.loads(sys.argv[1]))', f'swiglu_{direction}=True)')
    proc = subprocess.run([sys.executable, "-I", "-c", child, "[]"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["cache"] == "compiled" and out["kernel"] == f"jdg_swiglu_{direction}_bf16"
    assert f"Compiling entry function 'jdg_swiglu_{direction}'" in out["log"]
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", out["log"])
    assert spills and all(s == ("0", "0") for s in spills), out["log"]


@pytest.mark.parametrize("direction", ["forward", "backward"])
@pytest.mark.parametrize("mode", ["in_f32", "per_block", "block_map", "untransposed", "row_map", "rowwise"])
def test_swiglu_with_another_mode_is_refused(mode, direction):
    with pytest.raises(ValueError, match=f"swiglu_{direction} needs bfloat16 x and none of"):
        _ext.compile_fp8_quantize("sm_90a", **{f"swiglu_{direction}": True, mode: True})


def test_swiglu_forward_and_backward_exclude_each_other():
    with pytest.raises(ValueError, match="swiglu_forward and swiglu_backward exclude each other"):
        _ext.compile_fp8_quantize("sm_90a", swiglu_forward=True, swiglu_backward=True)
