"""Register parity of the promotion's FFMAs in a problem's K loops (NOTES 120): for each K loop (a backward branch
whose body holds QGMMAs) the count of register-form FFMAs whose first source (the wgmma accumulator's element) and
third (the FP32 result it adds into) are registers of the same parity, i.e. of the same bank if the register file
has two banks by parity (NOTES 117). Compiled as k_loop_sass.py compiles (NVRTC, no GPU; cuobjdump on PATH).

    python benchmarks/experiments/ffma_bank_parity.py CUDA_DIR masked,4096,4096,7168,1,1228 dense,4096,7168,16384,1
"""

import re
import sys

from k_loop_sass import compile_sass, loop_bodies

FFMA = re.compile(r"FFMA\S* R(\d+), R(\d+)(?:\.reuse)?, R\d+(?:\.reuse)?, R(\d+)")


def loop_parities(sass):
    for body in loop_bodies(sass):
        ffmas = [m for m in map(FFMA.search, body) if m]
        yield len(body), len(ffmas), sum(int(m.group(2)) % 2 == int(m.group(3)) % 2 for m in ffmas)


if __name__ == "__main__":
    for shape in sys.argv[2:]:
        config, sass = compile_sass(sys.argv[1], shape)
        loops = ", ".join(f"{n} instr. {f} FFMA {s} same parity" for n, f, s in loop_parities(sass))
        print(f"{shape:32s} {config:24s} {loops}")
