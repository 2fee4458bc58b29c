"""Whether two kernel header trees compile a problem's K loops to the same SASS, instruction for instruction (register
numbers and reuse flags aside): the check behind NOTES 88's "same instructions in another order". Each tree's kernel is
compiled for sm_90a with NVRTC (no GPU), disassembled with cuobjdump (`pip install --target DIR
nvidia-cuda-cuobjdump`, then DIR/nvidia/cu13/bin on PATH); a K loop is a backward branch whose body holds QGMMAs.

    python benchmarks/experiments/k_loop_sass.py OLD_CUDA_DIR NEW_CUDA_DIR [mode,m,n,k,groups[,expected_m] ...]
e.g. with c24a858's headers extracted by `git archive c24a858 cuda | tar -x -C /tmp/old`:
    python benchmarks/experiments/k_loop_sass.py /tmp/old/cuda cuda ragged,8221,4096,1536,16
Modes: dense, contiguous, ragged, masked (m: rows per group, then expected_m), k_grouped (k: the summed K).
"""

import glob
import os
import re
import subprocess
import sys
import tempfile

# NOTES 88's kernels: Qwen3-235B down (128 x 160 and 256 x 128 tiles), Qwen3-30B down and up, a DeepSeek-V3 decode
# layer, DeepSeek-V3 up at 4k tokens
SHAPES = ["ragged,8221,4096,1536,16", "ragged,8192,4096,1536,16", "ragged,32768,2048,768,128",
          "ragged,32768,1536,2048,128", "masked,128,4096,7168,32,38", "ragged,4096,4096,7168,32"]
COMPILE = """
import glob, os, sys, tempfile
os.environ["DG_JIT_CACHE_DIR"] = tempfile.mkdtemp()
from jax_deepgemm import _C, runtime
runtime.extension()
_C.configure(sys.argv[1], [])
mode, m, n, k, g, e = sys.argv[2], *map(int, sys.argv[3:])
kg = mode == "k_grouped"  # the weight-gradient GEMM: per-row B scales, FP32 out with C (as the API calls it)
c = _C.compile_fp8_gemm("sm_90a", m, n, k, 132, b_scale_per_row=kg, out_f32=kg, c_kind=2 if kg else 0,
                        grouping=mode, num_groups=g, expected_m=e)["config"]
print(glob.glob(os.environ["DG_JIT_CACHE_DIR"] + "/**/kernel.cubin", recursive=True)[0])
print(f"{c['block_m']}x{c['block_n']} s{c['stages']} cluster {c['cluster']}")
"""


def compile_sass(include_dir, shape):
    mode, *numbers = shape.split(",")
    numbers += ["0"] * (6 - len(shape.split(",")))
    out = subprocess.run([sys.executable, "-c", COMPILE, os.path.abspath(include_dir), mode, *numbers],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    sass = subprocess.run(["cuobjdump", "-sass", out[0]], capture_output=True, text=True, check=True).stdout
    return out[1], sass


def loop_bodies(sass):
    """The K loops' instructions as disassembled (predicates, registers and reuse flags included)."""
    lines = [(int(a, 16), ins) for a, ins in re.findall(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", sass)]
    at = {a: i for i, (a, _) in enumerate(lines)}
    for i, (address, ins) in enumerate(lines):
        target = re.search(r"BRA (0x[0-9a-f]+)", ins)
        if target and int(target.group(1), 16) < address and int(target.group(1), 16) in at:
            body = [x for _, x in lines[at[int(target.group(1), 16)]:i + 1]]
            if any("QGMMA" in x for x in body) and len(body) < 1200:
                yield body


def k_loops(sass):
    """The K loops with predicates, register numbers and reuse flags left out."""
    return [[re.sub(r"\.reuse", "", re.sub(r"\bU?R\d+\b", "R", re.sub(r"^@!?U?P\w+ ", "", x))) for x in body]
            for body in loop_bodies(sass)]


def main(old, new, shapes):
    for shape in shapes:
        (config, old_sass), (_, new_sass) = compile_sass(old, shape), compile_sass(new, shape)
        a, b = k_loops(old_sass), k_loops(new_sass)
        same = [x == y for x, y in zip(a, b)]
        sizes = [f"{len(x)}/{len(y)}" for x, y in zip(a, b)]
        print(f"{shape:28s} {config:22s} K loops {len(a)} / {len(b)}, instructions {sizes}, identical {same}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:] or SHAPES)
