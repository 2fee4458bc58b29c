#!/usr/bin/env python3
"""Random problems through the heuristics, and optionally through the compiler (no GPU needed).

Each problem is what a caller of the package can ask for: a grouping, M (rows per group), N, K (a multiple of 16,
as the package pads it), the SM count, B scales per 128x128 block or per row, FP8 kinds, bf16 or FP32 out with or
without C, the HBM rate and, for masked GEMMs, the expected_m hint. Sizes are log-uniform over what the kernels
take, often rounded to 128 or 16, so that every step's bounds are crossed from both sides.

    python3 tools/config_fuzz.py [--problems N] [--seed S]            the configuration each problem selects must exist
                                                                       and fit (smem, grid, stages, widths)
    python3 tools/config_fuzz.py --compile [--problems N] [--seed S]  also compile each one with NVRTC (verbose
                                                                       ptxas, as tests/cuda/compile_check.py does):
                                                                       errors, warnings and ptxas's serialization
                                                                       notes fail; spills are counted per kernel kind

Exit status 1 when any problem fails. tests/test_jit_runtime.py runs the selection part on a fixed seed.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib.util
import math
import os
import random
import re
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SMEM_LIMIT = 232448  # the opt-in shared memory of an sm_90 CTA
GROUPINGS = ("dense", "dense", "contiguous", "ragged", "masked", "k_grouped")


def _size(rng: random.Random, lo: int, hi: int) -> int:
    v = int(math.exp(rng.uniform(math.log(lo), math.log(hi))))
    r = rng.random()
    if r < 0.4:
        return max(lo, -(-v // 128) * 128)
    if r < 0.6:
        return max(lo, -(-v // 16) * 16)
    return v


def problems(seed: int, count: int):
    """`count` problems as (m, n, k, num_sms, kwargs of select_fp8_gemm_config / compile_fp8_gemm)."""
    rng = random.Random(seed)
    for _ in range(count):
        grouping = rng.choice(GROUPINGS)
        m, n, k = _size(rng, 1, 40000), _size(rng, 16, 40000), -(-_size(rng, 16, 40000) // 16) * 16
        kw = dict(b_scale_per_row=rng.random() < 0.25, out_f32=rng.random() < 0.3, c_kind=0,
                  hbm_gbs=rng.choice([0, 3352, 4814]), a_e5m2=rng.random() < 0.1, b_e5m2=rng.random() < 0.1)
        if grouping == "dense" and kw["out_f32"]:
            kw["c_kind"] = rng.choice([0, 1, 2])
        if grouping != "dense":
            kw.update(grouping=grouping, num_groups=rng.choice([1, 2, 4, 8, 32, 256]))
        if grouping == "masked":
            kw["expected_m"] = rng.choice([1, m // 2 + 1, m, 2 * m])
        if grouping == "k_grouped":  # per-row B scales, FP32 out with or without C; K in 128 blocks
            kw.update(b_scale_per_row=True, out_f32=True, c_kind=rng.choice([0, 2]))
            k = -(-k // 128) * 128
        yield m, n, k, rng.choice([132, 132, 114, 78, 16, 7, 2, 1]), kw


def selection_problems(ext, m, n, k, num_sms, kw) -> list[str]:
    """What is wrong with the configuration the heuristics select for a problem of `problems` (empty: nothing). Every
    such problem is one the API accepts, so a refusal (ValueError) is wrong too."""
    select_kw = {key: v for key, v in kw.items() if key not in ("a_e5m2", "b_e5m2")}
    try:
        c = ext.select_fp8_gemm_config(m, n, k, num_sms, **select_kw)
    except Exception as e:  # noqa: BLE001  (any exception is a bug of the heuristics here)
        return [f"{type(e).__name__}: {e}"]
    bad = []
    widest = 128 if c["block_m"] == 256 else 176 if kw["b_scale_per_row"] else 192
    if c["smem_bytes"] > SMEM_LIMIT:
        bad.append(f"smem {c['smem_bytes']} > {SMEM_LIMIT}")
    if not 1 <= c["stages"] <= 16:
        bad.append(f"stages {c['stages']}")
    if not 1 <= c["grid"] <= num_sms or c["grid"] % c["cluster"]:
        bad.append(f"grid {c['grid']} (cluster {c['cluster']}, {num_sms} SMs)")
    if c["block_n"] % 16 or not 16 <= c["block_n"] <= widest:
        bad.append(f"BLOCK_N {c['block_n']} (at most {widest})")
    if c["tail_split"] and (c["cluster"] != 1 or c["split_k"] != 1):
        bad.append("the tail split with a cluster or split K")
    return bad


def _compile_check():
    spec = importlib.util.spec_from_file_location("jdg_compile_check", os.path.join(REPO, "tests", "cuda",
                                                                                     "compile_check.py"))
    cc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cc)
    return cc


@contextlib.contextmanager
def _quiet_stderr():
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args()
    if args.compile:  # ptxas's register and spill lines in each kernel's log; a cache of this run's own
        os.environ["DG_JIT_PTXAS_VERBOSE"] = "1"
        os.environ.setdefault("DG_JIT_CACHE_DIR", tempfile.mkdtemp(prefix="jdg-config-fuzz-"))
    sys.path.insert(0, REPO)
    from jax_deepgemm import _C

    cc = _compile_check() if args.compile else None
    failed, spills = 0, collections.Counter()
    seen = set()
    for m, n, k, num_sms, kw in problems(args.seed, args.problems):
        bad = selection_problems(_C, m, n, k, num_sms, kw)
        if not bad and cc is not None:
            try:  # (the JIT, verbose ptxas: see main's environment)
                with _quiet_stderr():  # (where the JIT prints each verbose log; the tool reads it from the result)
                    built = _C.compile_fp8_gemm("sm_90a", m, n, k, num_sms, **kw)
            except Exception as e:  # noqa: BLE001
                bad = [f"does not compile: {e}"[:3000]]
            else:
                if built["kernel"] not in seen:
                    seen.add(built["kernel"])
                    bad = cc.log_problems(built["log"])
                    _, spill = cc.parse_ptxas(built["log"])
                    if spill and (spill[1] or spill[2]):
                        spills[re.sub(r"_n\d+_k\d+", "", built["kernel"])] += 1
        if bad:
            failed += 1
            print(f"FAIL m={m} n={n} k={k} num_sms={num_sms} {kw}: " + "; ".join(bad), flush=True)
    print(f"{args.problems} problems selected, {len(seen)} kernels compiled, {failed} failed")
    for kind, count in spills.most_common():
        print(f"  spills: {count} x {kind}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
