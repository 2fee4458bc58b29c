"""Summary of dense_tile_oracle.sh's run: per shape every side's kernel time, the fastest side, the model's gap to it;
how often the model's cost orders two sides as they ran; and a refitted cost, checked by leaving each shape out.

The refit prices a side by its tile kind (BLOCK_M x BLOCK_N, clusters, the tail split compiled in), with the rounds of
tiles the kernel runs (grid and tiles from the configuration lines; the split, as the kernel decides it, where the
last round holds at most half of the grid's CTAs):
    us = a * (W * kb + s * kb / 2) + b * (W + s) + c * s
W whole rounds, s = 1 where the last round is split, kb = ceil(K / 128); a (us per K block of a tile) and b (us per
tile: start, epilogue) and c (the split's exchange) fitted per kind by least squares over the other shapes.

    python benchmarks/experiments/dense_tile_oracle.py OUT_DIR [OUT_DIR ...]   (the runs' folders, merged)
"""

from __future__ import annotations

import math
import pathlib
import re
import sys

import numpy as np

ROW = re.compile(r"^(\S+) r(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+) us")
CONFIG = re.compile(r"fp8_gemm m=(\d+) n=(\d+) k=(\d+) .*?-> (.*)$")
CONFIG_FILE = re.compile(r"configs_(.+)_r\d+\.txt$")
TILE_OVERHEAD = 64  # ffi/heuristics.cc's kTileOverhead
HALF_WIDTH_192_DISCOUNT = 1  # ffi/heuristics.cc's kHalfWidth192Discount


def read(outs: list[pathlib.Path]):
    """{(side, shape): mean us}, {(side, shape): configuration} from dense_tile_oracle.sh's files in `outs`."""
    samples: dict = {}
    for line in (line for out in outs for line in (out / "rows.txt").read_text().splitlines()):
        if m := ROW.match(line):
            samples.setdefault((m[1], (int(m[3]), int(m[4]), int(m[5]))), []).append(float(m[6]))
    configs = {}
    for path in (path for out in outs for path in out.glob("configs_*_r*.txt")):
        side = CONFIG_FILE.search(path.name)[1]
        for line in path.read_text().splitlines():
            if m := CONFIG.search(line):
                config = {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", m[4])}
                config["multicast_b"] = int("(B multicast)" in m[4])
                configs[(side, (int(m[1]), int(m[2]), int(m[3])))] = config
    return {key: float(np.mean(v)) for key, v in samples.items()}, configs


def rounds(c: dict) -> tuple[int, int]:
    """(whole rounds, 1 if the kernel splits the last round) as fp8_gemm_tiles.cuh's plan_tail decides it."""
    tiles, grid = c["tiles"], c["grid"]
    left = tiles % grid
    if c["tail_split"] and left and 2 * left <= grid:
        return tiles // grid, 1
    return math.ceil(tiles / grid), 0


def model_cost(c: dict) -> int:
    """ffi/heuristics.cc's cost_of (dense): half waves x (BLOCK_N x BLOCK_M / 128 + kTileOverhead - discount)."""
    discount = HALF_WIDTH_192_DISCOUNT if c["split_halves"] and c["block_n"] == 192 else 0
    split = rounds(c)[1]
    return (2 * c["waves"] - split) * (c["block_n"] * c["block_m"] // 128 + TILE_OVERHEAD - discount)


def kind(c: dict) -> str:
    return (f"{c['block_m']}x{c['block_n']}" + (f"c{c['cluster']}" if c["cluster"] > 1 else "")
            + ("b" if c["multicast_b"] else "")
            + ("ts" if c["tail_split"] else "") + (f"sk{c['split_k']}" if c["split_k"] > 1 else ""))


def features(c: dict, k: int) -> list[float]:
    whole, split = rounds(c)
    kb = math.ceil(k / 128)
    return [whole * kb + split * kb / 2, whole + split, split]


def fit(rows: list[tuple[dict, int, float]]) -> np.ndarray:
    """Least-squares (a, b, c) of one kind over rows of (configuration, K, us)."""
    x = np.array([features(c, k) for c, k, _ in rows])
    y = np.array([us for _, _, us in rows])
    return np.linalg.lstsq(x, y, rcond=None)[0]


def rows_by_kind(times: dict, configs: dict, left_out=None) -> dict:
    """{kind: [(configuration, K, us)]} over the forced sides' rows, but for shape `left_out`."""
    by_kind: dict = {}
    for (side, shape), us in times.items():
        c = configs.get((side, shape))
        if side != "model" and shape != left_out and c:
            by_kind.setdefault(kind(c), []).append((c, shape[2], us))
    return by_kind


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main(outs: list[pathlib.Path]) -> None:
    times, configs = read(outs)
    shapes = sorted({shape for _, shape in times})
    sides = sorted({side for side, _ in times}, key=lambda s: (s != "model", s))
    forced = [s for s in sides if s != "model"]
    print("shape            " + " ".join(f"{s:>10s}" for s in sides) + "  fastest     model/fastest  model's tile")
    gaps = {}
    for shape in shapes:
        row = {s: times.get((s, shape)) for s in sides}
        ran = {s: us for s, us in row.items() if us is not None}
        if "model" not in ran or len(ran) < 2:
            continue
        fastest = min(ran, key=ran.get)
        gaps[shape] = ran["model"] / ran[fastest]
        model_config = configs.get(("model", shape))
        print(f"{'x'.join(map(str, shape)):16s} " + " ".join(f"{row[s]:10.1f}" if row[s] else f"{'-':>10s}"
                                                       for s in sides)
              + f"  {fastest:10s} {gaps[shape]:8.3f}      {kind(model_config) if model_config else '?'}")
    if not gaps:
        print("no shape with the model's time and a forced side")
        return
    within = sum(g <= 1.03 for g in gaps.values())
    print(f"\nmodel / fastest: geometric mean {geomean(gaps.values()):.4f}, within 3% on {within} of {len(gaps)}")

    # The model's cost against the measured order, over every pair of forced sides of one shape.
    agree = pairs = 0
    for shape in gaps:
        ran = [(s, times[(s, shape)], configs.get((s, shape))) for s in forced if (s, shape) in times]
        ran = [(s, us, c) for s, us, c in ran if c]
        for i, (_, us_i, c_i) in enumerate(ran):
            for _, us_j, c_j in ran[i + 1:]:
                cost_i, cost_j = model_cost(c_i), model_cost(c_j)
                if cost_i == cost_j or abs(us_i / us_j - 1) < 0.01:
                    continue  # ties and differences within the noise say nothing
                pairs += 1
                agree += (cost_i < cost_j) == (us_i < us_j)
    print(f"the model's cost orders {agree} of {pairs} pairs of forced sides (>= 1% apart) as they ran")

    # The refit, each shape left out of its own fit.
    picks = []
    for shape in gaps:
        by_kind = rows_by_kind(times, configs, left_out=shape)
        predicted = {}
        for side in forced:
            c = configs.get((side, shape))
            rows = by_kind.get(kind(c), []) if c else []
            if (side, shape) in times and len(rows) >= 3:
                predicted[side] = float(np.dot(fit(rows), features(c, shape[2])))
        if predicted:
            pick = min(predicted, key=predicted.get)
            picks.append((shape, pick, times[(pick, shape)] / times[("model", shape)]))
    if picks:
        print(f"refit's pick (leave one shape out) / model's: geometric mean {geomean(r for *_, r in picks):.4f}, "
              f"faster by > 1% on {sum(r < 0.99 for *_, r in picks)}, slower by > 1% on "
              f"{sum(r > 1.01 for *_, r in picks)} of {len(picks)}; / fastest: geometric mean "
              f"{geomean(r * gaps[shape] for shape, _, r in picks):.4f}")
        for shape, pick, ratio in picks:
            if abs(ratio - 1) > 0.01:
                print(f"  {'x'.join(map(str, shape)):16s} {pick:10s} {ratio:.3f}")
    print("\nfitted on every shape: us per K block of a tile (a), per tile (b), per split exchange (c), rows")
    for name, rows in sorted(rows_by_kind(times, configs).items()):
        if len(rows) >= 3:
            a, b, c = fit(rows)
            print(f"  {name:14s} a {a:7.3f}  b {b:7.2f}  c {c:7.2f}  ({len(rows)} rows)")


if __name__ == "__main__":
    main([pathlib.Path(arg) for arg in sys.argv[1:]])
