#!/usr/bin/env python3
"""Compile-check the FP8 GEMM kernel for sm_90a on a machine without a GPU.

For a sweep of configurations this generates the wrapper source the runtime generates (the JDG_* #defines, then
`#include <jax_deepgemm/fp8_gemm.cuh>`) and compiles it to a cubin with NVRTC (through ctypes, options as the
runtime uses them: --gpu-architecture=sm_90a -std=c++17 -default-device -I<repo>/cuda, plus verbose ptxas), and a
few with nvcc. It fails on any error or warning, checks that a stage count one past the shared-memory limit is
rejected by the kernel's static_assert, and reports registers and spills per configuration. With cuobjdump (and
nvdisasm) on PATH it also checks the SASS: 4 QGMMA per K block, no local-memory traffic unless ptxas reported
spills, the promotion's FFMAs interleaving their yield flags, and the register epilogue's widest stores (without
a CUDA toolkit: `pip install --target DIR nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`, then DIR/nvidia/cu13/bin on
PATH).

    python3 tests/cuda/compile_check.py            # full sweep
    python3 tests/cuda/compile_check.py --quick    # a dozen configurations
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CUDA_DIR = os.path.join(REPO, "cuda")
sys.path.insert(0, CUDA_DIR)

# Mirror of fp8_gemm_abi.h's helpers (checked against the kernel's static_asserts by the "max + 1" compiles).
MAX_SMEM = 232448


def align(x, a):
    return (x + a - 1) // a * a


def smem_bytes(bm, bn, stages, row=0, tma_store=0, split_k=1, id_rows=0):
    boxes = bm // 128 if bm > 128 else 1  # A-scale boxes of bm / boxes + 4 floats
    sa, sb = boxes * align((bm // boxes + 4) * 4, 128), align(bn * 4, 128) if row else 0  # per-stage scale slots
    barrier_area = align(2 * stages * 8 + 16 + (128 + 4 * id_rows if id_rows else 0), 1024)
    return (align(stages * bm * 128, 1024) + align(stages * bn * 128, 1024) + align(stages * sa, 1024) +
            align(stages * sb, 1024) + (align(bm * bn * 2, 1024) if tma_store else 0) +
            align((split_k - 1) * bm * bn * 4, 1024) + barrier_area + 1024)


# id_rows: BLOCK_M for contiguous kernels (their tile ids' slot); it changes no contiguous configuration's maximum
# (128x128 B scales), so the callers below leave it out.
def max_stages(bm, bn, row=0, tma_store=0, split_k=1, id_rows=0):
    s = 1
    while smem_bytes(bm, bn, s + 1, row, tma_store, split_k, id_rows) <= MAX_SMEM:
        s += 1
    return s


BLOCK_NS = list(range(16, 257, 16))


def find_nvrtc():
    cands = []
    env = os.environ.get("JDG_NVRTC")
    if env:
        cands.append(env)
    try:
        import nvidia  # noqa: F401  (the pip wheel nvidia-cuda-nvrtc)

        for p in nvidia.__path__:
            cands += sorted(glob.glob(os.path.join(p, "cu13", "lib", "libnvrtc.so*")))
    except ImportError:
        pass
    cands += sorted(glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "nvidia", "cu13", "lib",
                                           "libnvrtc.so*")))
    cands += ["/usr/local/cuda/lib64/libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so"]
    for c in cands:
        if "builtins" in c:
            continue
        try:
            return ctypes.CDLL(c), c
        except OSError:
            continue
    raise SystemExit("libnvrtc not found (pip install nvidia-cuda-nvrtc, or set JDG_NVRTC)")


_NVRTC = None


def nvrtc():
    global _NVRTC
    if _NVRTC is None:
        lib, _ = find_nvrtc()
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        _NVRTC = lib
    return _NVRTC


def nvrtc_compile(src: str, name: str, options: list[str]):
    """Returns (ok, log, cubin bytes or None)."""
    lib = nvrtc()
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None)
    if rc:
        raise RuntimeError(f"nvrtcCreateProgram: {lib.nvrtcGetErrorString(rc).decode()}")
    opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    rc = lib.nvrtcCompileProgram(prog, len(options), opts)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, buf)
    log = buf.value.decode(errors="replace")
    cubin = None
    if rc == 0:
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        cbuf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetCUBIN(prog, cbuf)
        cubin = cbuf.raw
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc == 0, log, cubin


def wrapper_source(cfg: dict) -> str:
    lines = [f"#define JDG_{k} {v}" for k, v in cfg.items()]
    lines.append("#include <jax_deepgemm/fp8_gemm.cuh>")
    return "\n".join(lines) + "\n"


GROUPED_MODES = {1: "contiguous", 2: "ragged", 3: "masked"}  # JDG_GROUPED_MODE (fp8_gemm_abi.h); 0 is dense
MODE_NAMES = {**GROUPED_MODES, 4: "k_grouped"}  # k-grouped takes per-row B scales, f32 out or bf16 without C


def cfg_name(cfg):
    mode = cfg.get("GROUPED_MODE", 0)
    return ((f"{MODE_NAMES[mode]}_" if mode else "") +
            f"bm{cfg['BLOCK_M']}_bn{cfg['BLOCK_N']}_s{cfg['STAGES']}_n{cfg['N']}_k{cfg['K']}_a{cfg['A_E5M2']}"
            f"b{cfg['B_E5M2']}_row{cfg['B_SCALE_PER_ROW']}_f32{cfg['OUT_F32']}_c{cfg['C_KIND']}" +
            (f"_x{cfg['CLUSTER']}" if cfg.get("CLUSTER", 1) > 1 else "") + ("_mb" if cfg.get("MULTICAST_B") else "") +
            ("_ts" if cfg.get("TMA_STORE") else "") +
            ("_ap" if cfg.get("ACC_PIPELINE") else "") + ("_ps" if cfg.get("PAIRED_STAGES") else "") +
            ("_pw" if cfg.get("PROFILE_WAITS") else "") +
            ("_sh" if cfg.get("SPLIT_HALVES") else "") + (f"_sk{cfg['SPLIT_K']}" if cfg.get("SPLIT_K", 1) > 1 else "") +
            ("_tail" if cfg.get("TAIL_SPLIT") else "") + ("_seg" if cfg.get("CONTIGUOUS_SEGMENTS") else "") +
            ("_dt" if cfg.get("DYNAMIC_TILES") else ""))


NVRTC_OPTS = ["--gpu-architecture=sm_90a", "-std=c++17", "-default-device", f"-I{CUDA_DIR}",
              "--ptxas-options=--verbose"]

RE_REGS = re.compile(r"Used (\d+) registers")
RE_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def gemm_part(text, start_marker):
    """The part of a ptxas log or SASS listing about the GEMM kernel jdg_fp8_gemm, not the profile report kernel that
    DG_PROFILE_WAITS builds add: from `start_marker` + the name to the next `start_marker`."""
    m = re.search(re.escape(start_marker) + r"\s*'?jdg_fp8_gemm\b", text)
    if not m:
        return text
    end = text.find(start_marker, m.end())
    return text[m.start():] if end < 0 else text[m.start():end]


def parse_ptxas(log):
    log = gemm_part(log, "Compiling entry function")
    regs = RE_REGS.search(log)
    sp = RE_SPILL.search(log)
    return (int(regs.group(1)) if regs else None, tuple(int(x) for x in sp.groups()) if sp else None)


def log_problems(log):
    """Lines of the log that are warnings or errors (ptxas 'info' lines are fine, but for its notes that it had to
    serialize wgmma instructions, which would undo the accumulator pipeline)."""
    bad = []
    for line in log.splitlines():
        low = line.lower()
        if (("warning" in low or "error" in low) and "info" not in low) or "performance loss" in low:
            bad.append(line)
    return bad


def ffma_yield_flags(sass: str) -> list[int]:
    """The yield flag of every FFMA in cuobjdump's SASS listing (instruction line with the low word, next line the
    high word)."""
    lines = sass.splitlines()
    flags = []
    for i, line in enumerate(lines[:-1]):
        if re.search(r"\*/\s+(@!?U?P\w+\s+)?FFMA\b", line):
            high = re.search(r"/\* (0x[0-9a-f]{16}) \*/", lines[i + 1])
            if high:
                flags.append((int(high.group(1), 16) >> 45) & 1)
    return flags


def widest_register_store(cfg) -> str | None:
    """The SASS store the register epilogue's widest path should compile to (store_bf16_words, store_quad, NOTES 105
    and 107), where D's rows allow a vector: a store the compiler splits runs at the narrower width's speed (NOTES
    108). None where there is no vector store to look for (the TMA-store epilogue)."""
    n, bn = cfg["N"], cfg["BLOCK_N"]
    if cfg.get("TMA_STORE"):
        return None
    if cfg["OUT_F32"]:  # (shifted to the rows' alignment at N % 4 != 0)
        return "STG.E.128"
    if bn % 32 == 0:  # whole chunk quads: 8 columns per lane (shifted to the rows' alignment at N % 8 != 0)
        return "STG.E.128"
    return "STG.E.64" if n % 4 == 0 else None  # (N % 4 == 2: 4-byte STG.E, not told apart from element stores)


def gemm_sass(cubin: bytes):
    """The GEMM kernel's SASS listing, or (None, why) where cuobjdump is missing or fails."""
    if not shutil.which("cuobjdump"):
        return None, "no cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        r = subprocess.run(["cuobjdump", "-sass", f.name], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()[:80]
    return gemm_part(r.stdout, "Function :"), ""


# Dynamic tiles by default (contiguous, ragged, k-grouped: heuristics.cc step 18) must leave the kernel as warp-uniform
# as the static order's: where ptxas cannot prove the tile index uniform, the stage counters fall into vector registers
# and every wgmma descriptor goes through R2UR (+5% on every tile, benchmarks/NOTES.md 134), and warp-synchronous code
# gets WARPSYNC.COLLECTIVE copies. How much of that a small change to the tile walk brings is hard to foresee (134), so
# the twin without JDG_DYNAMIC_TILES is compiled and compared.
DYNAMIC_TILES_DEFAULT_MODES = (1, 2, 4)
UNIFORMITY_SLACK = 8  # more R2UR or collective regions than the static twin's that still count as uniform


def uniformity_problem(sass: str, cfg: dict):
    if not cfg.get("DYNAMIC_TILES") or cfg.get("GROUPED_MODE", 0) not in DYNAMIC_TILES_DEFAULT_MODES:
        return None
    twin = {k: v for k, v in cfg.items() if k != "DYNAMIC_TILES"}
    ok, log, cubin = nvrtc_compile(wrapper_source(twin), cfg_name(twin) + ".cu", NVRTC_OPTS)
    twin_sass = gemm_sass(cubin)[0] if ok else None
    if twin_sass is None:
        return None
    counts = {op: (sass.count(op), twin_sass.count(op)) for op in ("R2UR", "WARPSYNC.COLLECTIVE")}
    if all(dt <= static + UNIFORMITY_SLACK for dt, static in counts.values()):
        return None
    return "not warp-uniform with dynamic tiles: " + ", ".join(f"{op} {dt} against {static} in the static twin"
                                                               for op, (dt, static) in counts.items())


def check_sass(cubin: bytes, spilled: bool, cfg: dict):
    """(ok, message). Skipped (ok) when cuobjdump is not on PATH."""
    block_m, block_n = cfg["BLOCK_M"], cfg["BLOCK_N"]
    sass, why = gemm_sass(cubin)
    if sass is None:
        return True, f"sass: skipped ({why})"
    gmma = re.findall(r"\b(QGMMA\.[0-9x]+\.F32\.E[45]M[23]\.E[45]M[23])", sass)
    local = len(re.findall(r"\b(LDL|STL)\b", sass))
    msgs = []
    ok = True
    if not gmma or len(gmma) % 4:  # 4 per K block; the compiler may unroll a short K loop
        ok = False
        msgs.append(f"expected a multiple of 4 QGMMA, found {len(gmma)}")
    if local and not spilled:
        ok = False
        msgs.append(f"{local} LDL/STL without reported spills")
    # DeepGEMM patched its cubins so that consecutive FFMAs of the promotion alternate the yield flag of their
    # control bits (bit 45 of an instruction's second 64-bit word), letting the other warpgroup issue its wgmmas
    # between them; nvcc 13 emits that interleave itself where there is another warpgroup to yield to (BLOCK_M >=
    # 128: 30-60% of the FFMAs carry the flag cleared; one consumer warpgroup, BLOCK_M = 64: none do). Check it still
    # does where the promotion is long (BLOCK_N >= 64: 32 or more FFMAs per K block) and not rescheduled around
    # spills (the widest tiles, 256 x 192 and up, spill hundreds of bytes; there 76-80% are cleared). Up to 85%
    # passes: since the contiguous tile ids (benchmarks/NOTES.md 142) ptxas clears 80% / 78% in the contiguous
    # 128 x 160 / 176 kernels at 2 stages (69% / 43% before), with no spill, and 82% in the 128 x 160 one since the
    # contiguous tiles are published whole (NOTES 144). This checks ptxas's own output (compiled
    # here, not through the JIT): the JIT's FFMA hint pass (ffi/sass_hints.h) then rewrites those flags along the same
    # FFMA chains, one yield in DG_JIT_FFMA_YIELD_PERIOD (tests/test_sass_hints.py).
    yields = ffma_yield_flags(sass)
    if block_m >= 128 and block_n >= 64 and len(yields) >= 32 and not spilled:
        cleared = yields.count(0)
        if not 0.25 <= cleared / len(yields) <= 0.85:
            ok = False
            msgs.append(f"FFMA yield flags not interleaved ({cleared} of {len(yields)} cleared)")
    store = widest_register_store(cfg)
    if store and not re.search(re.escape(store) + r"\s", sass):
        ok = False
        msgs.append(f"no {store}: the register epilogue's widest store was split or not taken")
    uniformity = uniformity_problem(sass, cfg)
    if uniformity:
        ok = False
        msgs.append(uniformity)
    warn_serial = "serializ" in sass.lower()
    if warn_serial:
        msgs.append("serialization note in SASS")
    summary = f"{len(gmma)}x {gmma[0] if gmma else '-'}, local ops {local}, FFMA yields {yields.count(0)}/{len(yields)}"
    return ok, "sass: " + (", ".join(msgs) if msgs else summary)


def run_one(job):
    cfg, expect_ok = job
    src = wrapper_source(cfg)
    ok, log, cubin = nvrtc_compile(src, cfg_name(cfg) + ".cu", NVRTC_OPTS)
    res = {"cfg": cfg, "expect_ok": expect_ok, "ok": ok, "log": log}
    if expect_ok is True:
        res["problems"] = log_problems(log) if ok else [l for l in log.splitlines() if l.strip()][:20]
        res["regs"], res["spill"] = parse_ptxas(log)
        spilled = bool(res["spill"] and (res["spill"][1] or res["spill"][2]))
        if ok:
            res["sass_ok"], res["sass"] = check_sass(cubin, spilled, cfg)
    else:
        # must fail, through our static_assert (False: the one about shared memory; a string: the one saying that)
        reason = expect_ok or "do not fit in shared memory"
        res["expect_ok"] = False
        res["problems"] = [] if (not ok and reason in log) else [f"expected the static_assert '{reason}' to reject it"]
    return res


def sweep(quick: bool):
    jobs = []
    macro_combos = list(itertools.product([0, 1, 2], [0, 1], [0, 1], [(0, 0), (0, 1), (1, 0), (1, 1)]))
    shapes = [(2112, 7168), (130, 208), (7168, 2048), (1, 16), (4096, 200 // 16 * 16)]

    def cfg(bm, bn, st, n, k, ckind=0, out32=0, row=0, e=(0, 0), mode=0, cluster=1, tma_store=0, acc_pipe=0):
        c = {"N": n, "K": k, "BLOCK_M": bm, "BLOCK_N": bn, "STAGES": st, "A_E5M2": e[0], "B_E5M2": e[1],
             "B_SCALE_PER_ROW": row, "OUT_F32": out32, "C_KIND": ckind}
        if mode:
            c["GROUPED_MODE"] = mode
        if cluster > 1:
            c["CLUSTER"] = cluster
        if tma_store:
            c["TMA_STORE"] = 1
        if acc_pipe:
            c["ACC_PIPELINE"] = 1
        return c

    # The grouped modes (no C): each with 128x128 and per-row B scales, a straddling and a dividing BLOCK_N, and
    # the widest BLOCK_N the heuristic picks (register pressure of the contiguous pass bookkeeping).
    grouped = []
    for mode in GROUPED_MODES:
        grouped += [cfg(128, 128, max_stages(128, 128), 4096, 7168, mode=mode),
                    cfg(256, 128, max_stages(256, 128), 4096, 7168, mode=mode, cluster=2),
                    cfg(256, 96, 3, 130, 208, 0, 1, 1, mode=mode),
                    cfg(64, 112, 3, 130, 208, 0, 1, 1, (0, 1), mode=mode),
                    cfg(128, 192, max_stages(128, 192), 7168, 2048, mode=mode),
                    cfg(128, 176, 3, 7168, 2048, 0, 0, 1, mode=mode)]
    # k-grouped: per-row B scales; f32 out with or without an f32 C, bf16 out without C
    grouped += [cfg(128, 176, max_stages(128, 176, 1), 7168, 32768, 2, 1, 1, mode=4),
                cfg(256, 128, max_stages(256, 128, 1), 7168, 32768, 2, 1, 1, mode=4, cluster=2),
                cfg(64, 48, 2, 130, 384, 0, 1, 1, (1, 1), mode=4),
                cfg(256, 128, max_stages(256, 128, 1), 7168, 16384, 0, 0, 1, mode=4, cluster=2),
                cfg(128, 128, max_stages(128, 128, 1), 130, 384, 0, 0, 1, mode=4, acc_pipe=1)]

    if quick:
        for bm, bn in [(64, 16), (64, 112), (128, 128), (128, 160), (64, 48), (128, 256), (256, 128), (256, 112)]:
            jobs.append((cfg(bm, bn, max_stages(bm, bn), 2112, 7168), True))
        for bm, bn in [(256, 128), (128, 192), (64, 32)]:
            jobs.append((cfg(bm, bn, max_stages(bm, bn), 7168, 16384, cluster=2), True))
        # rows that are not 16-byte multiples (NOTES 107-109): N % 8 == 4 in whole chunk quads (16-byte stores shifted
        # to each row's alignment), N % 4 == 2 with bf16 C in tiles of 144 (4-byte words and C pairs)
        jobs.append((cfg(128, 128, max_stages(128, 128), 1540, 2048), True))
        jobs.append((cfg(128, 144, max_stages(128, 144), 1538, 2048, ckind=1), True))
        # odd N: the same shifted stores (store_wave_bf16x8_shifted, NOTES 108, 109), several chunk quads per tile,
        # and one with bf16 C where N is below the tile's width
        jobs.append((cfg(256, 128, max_stages(256, 128), 7169, 2048), True))
        jobs.append((cfg(128, 32, max_stages(128, 32), 7, 2048, ckind=1), True))
        # f32 rows of N % 4 != 0: the same shifted stores in the store layout (store_wave_f32_shifted), odd N and
        # N % 4 == 2 with f32 C in tiles of 144 (9 chunk pairs), k-grouped at odd N (no line layout there)
        jobs.append((cfg(128, 128, max_stages(128, 128), 7169, 2048, out32=1), True))
        jobs.append((cfg(128, 144, max_stages(128, 144), 1538, 2048, ckind=2, out32=1), True))
        jobs.append((cfg(128, 128, max_stages(128, 128, 1), 7169, 16384, 2, 1, 1, mode=4), True))
        # dense clusters over an odd N-block count (33 of 64: the last one's tiles pair along M), and grouped ones
        # refused there
        jobs.append((cfg(256, 64, max_stages(256, 64, 0, 1), 2112, 7168, cluster=2, tma_store=1), True))
        jobs.append((cfg(128, 64, max_stages(128, 64), 2112, 7168, mode=2, cluster=2), "a cluster of 2 needs"))
        # and over a single N block (no paired column at all: every tile is the lone column's)
        jobs.append((cfg(128, 16, max_stages(128, 16), 16, 1504, cluster=2), True))
        # dense clusters sharing B (JDG_MULTICAST_B): half-width groups with the TMA store, 256-row tiles, and
        # refused in a grouped mode
        c = cfg(128, 192, max_stages(128, 192, 0, 1), 2112, 7168, cluster=2, tma_store=1)
        jobs.append(({**c, "SPLIT_HALVES": 1, "MULTICAST_B": 1}, True))
        jobs.append(({**cfg(256, 128, max_stages(256, 128), 7168, 16384, cluster=2), "MULTICAST_B": 1}, True))
        jobs.append(({**cfg(128, 128, 4, 4096, 7168, mode=1, cluster=2), "MULTICAST_B": 1}, "JDG_MULTICAST_B takes"))
        for bm, bn, row, mode in [(256, 128, 0, 0), (128, 192, 0, 0), (64, 64, 1, 0), (128, 128, 0, 1), (256, 128, 0, 2),
                                  (128, 192, 0, 3), (64, 64, 1, 2)]:
            jobs.append((cfg(bm, bn, max_stages(bm, bn, row, 1), 7168, 2048, row=row, mode=mode, tma_store=1), True))
        jobs.append((cfg(256, 128, max_stages(256, 128, 0, 1) + 1, 7168, 2048, tma_store=1), False))
        # the TMA store's narrower column atoms (fp8_gemm_d_atom_cols): 32 columns (160, 96, 32 wide) and 16 (176 with
        # per-row B scales, 48, 16), with half-width groups, the pipeline, B multicast, split K and in grouped modes
        for bm, bn, row, mode, extra in [(128, 160, 0, 0, {"SPLIT_HALVES": 1}), (128, 160, 0, 3, {"SPLIT_HALVES": 1}),
                                         (64, 160, 0, 1, {"SPLIT_HALVES": 1}), (128, 176, 1, 0, {}),
                                         (128, 96, 0, 0, {"ACC_PIPELINE": 1, "CLUSTER": 2, "MULTICAST_B": 1}),
                                         (128, 32, 0, 0, {"ACC_PIPELINE": 1}), (128, 48, 0, 2, {"ACC_PIPELINE": 1}),
                                         (64, 16, 0, 0, {"ACC_PIPELINE": 1, "SPLIT_K": 2}), (256, 32, 0, 0, {})]:
            c = cfg(bm, bn, max_stages(bm, bn, row, 1, extra.get("SPLIT_K", 1)), 7168, 2048, row=row, mode=mode,
                    tma_store=1)
            jobs.append(({**c, **extra}, True))
        jobs.append((cfg(128, 128, 3, 7168, 2048, 2, 1, 1, mode=4, tma_store=1), "the TMA-store epilogue takes"))
        jobs.append((cfg(256, 128, 3, 7168, 2048, 2, 0, 1, mode=4), "bf16 out without C"))
        for bm, bn, cl in [(256, 128, 2), (128, 176, 1)]:  # k-grouped bf16 out through the TMA store
            jobs.append((cfg(bm, bn, max_stages(bm, bn, 1, 1), 7168, 2048, 0, 0, 1, mode=4, cluster=cl, tma_store=1),
                         True))
        # the accumulator pipeline: every mode, both scale kinds, a cluster, a straddling width, tails
        for bm, bn, row, mode, tma, cl, n, k in [(128, 128, 0, 0, 1, 1, 7168, 16384), (64, 128, 0, 0, 1, 1, 2112, 7168),
                                                 (128, 112, 0, 0, 0, 2, 7168, 2048), (128, 128, 1, 0, 1, 1, 7168, 4096),
                                                 (128, 128, 0, 1, 1, 1, 4096, 7168), (128, 64, 0, 2, 1, 1, 4096, 7168),
                                                 (64, 96, 0, 3, 0, 1, 130, 208), (128, 128, 1, 4, 0, 1, 7168, 4096),
                                                 (64, 16, 0, 0, 0, 1, 2112, 7168), (64, 32, 0, 0, 0, 1, 2112, 7168),
                                                 (64, 48, 1, 3, 0, 1, 130, 208), (128, 80, 0, 1, 0, 1, 4096, 7168)]:
            out32, ck = (1, 2) if mode == 4 else (0, 0)
            jobs.append((cfg(bm, bn, max_stages(bm, bn, row, tma), n, k, ck, out32, row, mode=mode, cluster=cl,
                             tma_store=tma, acc_pipe=1), True))
        jobs.append((cfg(256, 128, 3, 7168, 2048, acc_pipe=1), "the accumulator pipeline takes"))
        # paired stages (JDG_PAIRED_STAGES): small tiles, an odd stage count, per-row B scales, a cluster, split K, the
        # tail split, a grouped mode; refused without the pipeline and with fewer than 4 stages
        for bm, bn, row, mode, tma, cl, n, k, extra in [(64, 32, 0, 0, 0, 1, 2112, 7168, {}),
                                                        (64, 64, 0, 0, 1, 1, 7168, 16384, {}),
                                                        (128, 32, 1, 0, 0, 1, 4096, 7168, {}),
                                                        (128, 112, 0, 0, 0, 2, 7168, 2048, {}),
                                                        (64, 32, 0, 0, 0, 1, 2112, 7168, {"SPLIT_K": 2}),
                                                        (128, 128, 0, 3, 1, 1, 4096, 7168, {"TAIL_SPLIT": 1}),
                                                        (128, 64, 0, 1, 1, 1, 4096, 7168, {})]:
            c = cfg(bm, bn, max_stages(bm, bn, row, tma, extra.get("SPLIT_K", 1)), n, k, 0, 0, row, mode=mode,
                    cluster=cl, tma_store=tma, acc_pipe=1)
            jobs.append(({**c, **extra, "PAIRED_STAGES": 1}, True))
        jobs.append(({**cfg(256, 128, 3, 7168, 2048), "PAIRED_STAGES": 1}, "paired stages take"))
        jobs.append(({**cfg(128, 128, 3, 7168, 2048, acc_pipe=1), "PAIRED_STAGES": 1}, "paired stages take"))
        # half-width wgmma groups (JDG_SPLIT_HALVES): every mode with 128x128 B scales, a cluster, both epilogues,
        # one 64-row wave per warpgroup; refused with per-row B scales
        for bm, bn, mode, tma, cl in [(128, 192, 0, 1, 2), (128, 160, 0, 0, 1), (64, 192, 0, 1, 1), (128, 192, 1, 1, 1),
                                      (128, 192, 2, 0, 1), (128, 192, 3, 1, 1)]:
            c = cfg(bm, bn, max_stages(bm, bn, 0, tma), 2112 if mode == 0 else 7168, 7168, mode=mode, cluster=cl,
                    tma_store=tma)
            jobs.append(({**c, "SPLIT_HALVES": 1}, True))
        c = cfg(128, 192, 3, 7168, 2048, 0, 0, 1)
        jobs.append(({**c, "SPLIT_HALVES": 1}, "JDG_SPLIT_HALVES takes"))
        # split K (JDG_SPLIT_K): clusters of 2 and 4, both epilogues, per-row B scales, f32 out with C; refused with
        # multicast, in a grouped mode and at 256 rows
        for bm, bn, sk, tma, row, ck, out32, n, k in [(64, 32, 2, 0, 0, 0, 0, 2112, 7168), (128, 64, 2, 1, 0, 0, 0, 4096, 7168),
                                                      (64, 64, 4, 1, 0, 0, 0, 2112, 7168), (128, 32, 4, 0, 0, 0, 0, 4096, 7168),
                                                      (128, 128, 2, 1, 0, 0, 0, 7168, 16384), (64, 64, 2, 0, 1, 2, 1, 130, 208)]:
            c = cfg(bm, bn, max_stages(bm, bn, row, tma, sk), n, k, ck, out32, row, tma_store=tma, acc_pipe=bn <= 128)
            jobs.append(({**c, "SPLIT_K": sk}, True))
        for bm, mode, cl in [(128, 0, 2), (128, 1, 1), (256, 0, 1)]:
            c = cfg(bm, 64, 2, 4096, 7168, mode=mode, cluster=cl)
            jobs.append(({**c, "SPLIT_K": 2}, "JDG_SPLIT_K takes"))
        # the tail split (JDG_TAIL_SPLIT): masked, dense and contiguous tiles, both epilogues, both pipelines, 256 rows,
        # per-row B scales with C; refused with multicast, ragged, split K and one K block
        for bm, bn, mode, tma, row, ck, n, k in [(128, 128, 3, 1, 0, 0, 4096, 7168), (64, 96, 3, 0, 1, 0, 130, 208),
                                                 (256, 128, 0, 1, 0, 0, 7168, 16384), (128, 192, 0, 0, 0, 2, 2112, 7168),
                                                 (128, 128, 1, 1, 0, 0, 4096, 7168), (128, 64, 0, 0, 1, 1, 7168, 2048)]:
            c = cfg(bm, bn, max_stages(bm, bn, row, tma), n, k, ck, 0, row, mode=mode, tma_store=tma,
                    acc_pipe=int(bm <= 128 and bn <= 128))
            jobs.append(({**c, "TAIL_SPLIT": 1, **({"SPLIT_HALVES": 1} if bn > 128 else {})}, True))
        for bm, mode, cl, sk, k in [(128, 0, 2, 1, 7168), (128, 2, 1, 1, 7168), (128, 0, 1, 2, 7168), (128, 3, 1, 1, 128)]:
            c = cfg(bm, 64, 2, 4096, k, mode=mode, cluster=cl)
            jobs.append(({**c, "TAIL_SPLIT": 1, **({"SPLIT_K": sk} if sk > 1 else {})}, "JDG_TAIL_SPLIT takes"))
        # contiguous segments (JDG_CONTIGUOUS_SEGMENTS): 256-row contiguous tiles, both epilogues, a cluster of 2;
        # refused at 128 rows, in another mode and with the tail split
        for tma, cl in [(1, 2), (0, 1)]:
            c = cfg(256, 128, max_stages(256, 128, 0, tma), 4096, 7168, mode=1, cluster=cl, tma_store=tma)
            jobs.append(({**c, "CONTIGUOUS_SEGMENTS": 1}, True))
        for bm, mode, extra in [(128, 1, {}), (256, 2, {}), (256, 1, {"TAIL_SPLIT": 1})]:
            c = cfg(bm, 128, 3, 4096, 7168, mode=mode)
            jobs.append(({**c, **extra, "CONTIGUOUS_SEGMENTS": 1}, "JDG_CONTIGUOUS_SEGMENTS takes"))
        # C pulled into L2 ahead of the epilogue (JDG_C_PREFETCH): k-grouped in a cluster, dense with bf16 and f32 C,
        # split K; refused without C and where C's rows are not 16-byte strides (bf16, N = 130)
        for bm, bn, mode, ck, out32, row, cl, n, k, extra in [(256, 128, 4, 2, 1, 1, 2, 7168, 32768, {}),
                                                              (128, 128, 0, 1, 0, 0, 1, 7168, 2048, {}),
                                                              (128, 192, 0, 2, 1, 0, 1, 2112, 7168, {}),
                                                              (64, 64, 0, 2, 1, 1, 1, 208, 7168, {"SPLIT_K": 2})]:
            c = cfg(bm, bn, max_stages(bm, bn, row, 0, extra.get("SPLIT_K", 1)), n, k, ck, out32, row, mode=mode,
                    cluster=cl, acc_pipe=int(bm <= 128 and bn <= 128))
            jobs.append(({**c, **extra, "C_PREFETCH": 1, **({"SPLIT_HALVES": 1} if bn > 128 else {})}, True))
        for ck, n in [(0, 7168), (1, 130)]:
            jobs.append(({**cfg(128, 128, 3, n, 2048, ck), "C_PREFETCH": 1}, "JDG_C_PREFETCH needs"))
        # dynamic tiles (JDG_DYNAMIC_TILES): every mode, clusters sharing A or B, both epilogues, the pipelines (with
        # cuobjdump the contiguous, ragged and k-grouped ones, the default, against their static twins:
        # uniformity_problem);
        # refused with the tail split and split K
        for bm, bn, mode, tma, row, cl, extra in [(256, 128, 2, 1, 0, 2, {}), (128, 128, 3, 1, 0, 1, {}),
                                                  (256, 128, 1, 1, 0, 2, {"CONTIGUOUS_SEGMENTS": 1}),
                                                  (256, 128, 0, 1, 0, 2, {"MULTICAST_B": 1}),
                                                  (256, 128, 4, 1, 1, 1, {}),
                                                  (128, 128, 0, 0, 0, 1, {"PAIRED_STAGES": 1})]:
            c = cfg(bm, bn, max_stages(bm, bn, row, tma), 7168, 2048, 0, 0, row, mode=mode, cluster=cl, tma_store=tma,
                    acc_pipe=int(bm <= 128 and bn <= 128))
            jobs.append(({**c, **extra, "DYNAMIC_TILES": 1}, True))
        for extra in [{"TAIL_SPLIT": 1}, {"SPLIT_K": 2}]:
            jobs.append(({**cfg(128, 64, 3, 4096, 7168), **extra, "DYNAMIC_TILES": 1}, "JDG_DYNAMIC_TILES takes"))
        # DG_PROFILE_WAITS builds must time the same wgmma stream: no printf (a call) in the GEMM kernel, whose
        # wgmmas ptxas would then serialize (C7510, a "performance loss" line that log_problems reports)
        for bm, bn, tma, pipe, mode in [(256, 128, 1, 0, 0), (128, 128, 1, 1, 0), (128, 128, 1, 0, 1)]:
            c = cfg(bm, bn, max_stages(bm, bn, 0, tma), 7168, 16384, mode=mode, tma_store=tma, acc_pipe=pipe)
            jobs.append(({**c, "PROFILE_WAITS": 1}, True))
        for ckind, out32, row, e in [(1, 0, 0, (0, 0)), (2, 1, 1, (1, 0)), (0, 1, 1, (0, 1)), (2, 0, 0, (1, 1))]:
            jobs.append((cfg(128, 144, 2, 130, 208, ckind, out32, row, e), True))
        jobs.append((cfg(128, 128, max_stages(128, 128) + 1, 2112, 7168), False))
        jobs.append((cfg(256, 128, max_stages(256, 128) + 1, 2112, 7168), False))
        jobs += [(c, True) for c in grouped]
        return jobs

    i = 0
    for bm in (64, 128, 256):
        for bn in BLOCK_NS:
            for st_pick in range(3):
                ck, o32, row, e = macro_combos[i % len(macro_combos)]
                ms = max_stages(bm, bn, row)
                st = (2, (2 + ms) // 2, ms)[st_pick]
                n, k = shapes[i % len(shapes)]
                jobs.append((cfg(bm, bn, st, n, k, ck, o32, row, e), True))
                i += 1
            jobs.append((cfg(bm, bn, max_stages(bm, bn) + 1, 2112, 7168), False))
        # per-row B scales and the straddling 128x128 path are register-heavier: check regs for every BN
        for bn in BLOCK_NS:
            jobs.append((cfg(bm, bn, 2, 2112, 7168, 1, 0, 1, (0, 0)), True))
            if bm <= 128 and bn <= 128:  # the heuristics' default there: the accumulator pipeline
                jobs.append((cfg(bm, bn, max_stages(bm, bn), 2112, 7168, acc_pipe=1), True))
            if bn <= (128 if bm == 256 else 192):  # the TMA store, every column atom width
                jobs.append((cfg(bm, bn, max_stages(bm, bn, 0, 1), 2112, 7168, tma_store=1), True))
    jobs += [(c, True) for c in grouped]
    for mode in GROUPED_MODES:  # every BLOCK_N with both B-scale kinds
        for bn in BLOCK_NS[:12]:
            jobs.append((cfg(128, bn, 2, 2112, 7168, 0, 0, 0, (0, 0), mode=mode), True))
            jobs.append((cfg(64, bn, 2, 2112, 7168, 0, 1, 1, (0, 0), mode=mode), True))
    # every macro combination on two tile shapes (one straddling 128-column scale blocks, one not)
    for bm, bn in [(128, 112), (64, 64), (256, 128)]:
        for ck, o32, row, e in macro_combos:
            jobs.append((cfg(bm, bn, 3, 130, 208, ck, o32, row, e), True))
    return jobs


NVCC_CONFIGS = [
    {"N": 2112, "K": 7168, "BLOCK_M": 128, "BLOCK_N": 128, "STAGES": 6, "A_E5M2": 0, "B_E5M2": 0,
     "B_SCALE_PER_ROW": 0, "OUT_F32": 0, "C_KIND": 0},
    {"N": 130, "K": 208, "BLOCK_M": 64, "BLOCK_N": 144, "STAGES": 4, "A_E5M2": 1, "B_E5M2": 0,
     "B_SCALE_PER_ROW": 0, "OUT_F32": 1, "C_KIND": 2},
    {"N": 7168, "K": 16384, "BLOCK_M": 256, "BLOCK_N": 128, "STAGES": 4, "A_E5M2": 0, "B_E5M2": 0,
     "B_SCALE_PER_ROW": 0, "OUT_F32": 0, "C_KIND": 0},
    {"N": 7168, "K": 2048, "BLOCK_M": 128, "BLOCK_N": 112, "STAGES": 5, "A_E5M2": 0, "B_E5M2": 1,
     "B_SCALE_PER_ROW": 1, "OUT_F32": 0, "C_KIND": 1},
    {"N": 4096, "K": 7168, "BLOCK_M": 128, "BLOCK_N": 128, "STAGES": 6, "A_E5M2": 0, "B_E5M2": 0,
     "B_SCALE_PER_ROW": 0, "OUT_F32": 0, "C_KIND": 0, "GROUPED_MODE": 1},
    {"N": 130, "K": 208, "BLOCK_M": 64, "BLOCK_N": 144, "STAGES": 4, "A_E5M2": 0, "B_E5M2": 0,
     "B_SCALE_PER_ROW": 1, "OUT_F32": 1, "C_KIND": 0, "GROUPED_MODE": 2},
    {"N": 7168, "K": 2048, "BLOCK_M": 128, "BLOCK_N": 112, "STAGES": 5, "A_E5M2": 0, "B_E5M2": 0,
     "B_SCALE_PER_ROW": 0, "OUT_F32": 0, "C_KIND": 0, "GROUPED_MODE": 3},
]


def nvcc_check(nvcc):
    failures = 0
    for cfg in NVCC_CONFIGS:
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "k.cu")
            with open(src, "w") as f:
                f.write(wrapper_source(cfg))
            cmd = [nvcc, "-cubin", "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", f"-I{CUDA_DIR}",
                   "--ptxas-options=-v", "-Werror", "all-warnings", src, "-o", os.path.join(d, "k.cubin")]
            r = subprocess.run(cmd, capture_output=True, text=True)
            log = r.stdout + r.stderr
            regs, spill = parse_ptxas(log)
            bad = log_problems(log)
            ok = r.returncode == 0 and not bad
            failures += not ok
            print(f"  nvcc  {'ok  ' if ok else 'FAIL'} {cfg_name(cfg):60s} regs {regs} spill {spill}")
            if not ok:
                print("    " + "\n    ".join(log.splitlines()[-20:]))
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--nvcc", default=os.environ.get("NVCC", shutil.which("nvcc") or "/usr/local/bin/nvcc"))
    args = ap.parse_args()

    _, path = find_nvrtc()
    ver_major, ver_minor = ctypes.c_int(), ctypes.c_int()
    nvrtc().nvrtcVersion(ctypes.byref(ver_major), ctypes.byref(ver_minor))
    print(f"NVRTC {ver_major.value}.{ver_minor.value} ({path})")

    jobs = sweep(args.quick)
    failures = 0
    rows = []
    with ProcessPoolExecutor(max_workers=args.j) as ex:
        for res in ex.map(run_one, jobs):
            name = cfg_name(res["cfg"])
            good = not res["problems"] and (res["ok"] == res["expect_ok"]) and res.get("sass_ok", True)
            failures += not good
            if res["expect_ok"]:
                rows.append(res)
                spill = res["spill"]
                print(f"  nvrtc {'ok  ' if good else 'FAIL'} {name:60s} regs {res['regs']} "
                      f"stack/spill-st/spill-ld {spill} {res.get('sass', '')}")
            else:
                print(f"  nvrtc {'ok  ' if good else 'FAIL'} {name:60s} rejected as expected" if good else
                      f"  nvrtc FAIL {name:60s} was not rejected as expected")
            for p in res["problems"]:
                print("      " + p)

    spilled = sorted({(r["cfg"]["BLOCK_M"], r["cfg"]["BLOCK_N"], r["cfg"]["B_SCALE_PER_ROW"]) for r in rows
                      if r["spill"] and (r["spill"][1] or r["spill"][2])})
    print("configurations with spills (BLOCK_M, BLOCK_N, per-row B scales):", spilled or "none")

    if os.path.exists(args.nvcc):
        print(f"nvcc: {args.nvcc}")
        failures += nvcc_check(args.nvcc)
    else:
        print("nvcc: not found, skipped")

    print(f"{len(jobs) + (len(NVCC_CONFIGS) if os.path.exists(args.nvcc) else 0) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
