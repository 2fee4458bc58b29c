"""dense_tile_oracle.py's fit over an A/B record of dense_tail_rounds.sh (NOTES 154: session 106's 03_-05_): both
sides' rows with their configuration lines, one sample per tile kind and shape; per kind a (us per K block), b (per
tile), c (per split exchange) and the fit's rms error, then 256 x 128 and 128 x 192 fitted with and without the tail
split's code in one fit (one b and c, the code as a share of a).

    python benchmarks/experiments/refit_tail_rows.py \
        tests/gpu_runs/2026-12-04_session106/0{3_tail_rule,4_tail_narrowed,5_tail_final}
"""

import pathlib
import sys
import tempfile

import numpy as np

import dense_tile_oracle as oracle


def as_oracle_run(records: list[pathlib.Path], into: pathlib.Path) -> None:
    """The records' run.txt lines ("new r1 M N K us ...") and configs_<side>_1.txt files in dense_tile_oracle's form,
    each record's sides named apart."""
    rows = []
    for record in records:
        for side in ("new", "old"):
            name = f"{side}_{record.name}"
            rows += [f"{name} r1 {line.split(None, 2)[2]}" for line in (record / "run.txt").read_text().splitlines()
                     if line.startswith(f"{side} r")]
            (into / f"configs_{name}_r1.txt").write_text((record / f"configs_{side}_1.txt").read_text())
    (into / "rows.txt").write_text("\n".join(rows) + "\n")


def main(records: list[pathlib.Path]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        as_oracle_run(records, pathlib.Path(tmp))
        times, configs = oracle.read([pathlib.Path(tmp)])
    by_kind: dict = {}  # kind -> shape -> [(configuration, us)]
    for (side, shape), us in times.items():
        if (side, shape) in configs:
            by_kind.setdefault(oracle.kind(configs[side, shape]), {}).setdefault(shape, []).append(
                (configs[side, shape], us))
    rows = {kind: [(v[0][0], shape[2], float(np.mean([us for _, us in v]))) for shape, v in shapes.items()]
            for kind, shapes in by_kind.items()}
    for kind, kind_rows in sorted(rows.items(), key=lambda item: -len(item[1])):
        if len(kind_rows) < 3:
            print(f"{kind:14s} ({len(kind_rows)} shapes: not fitted)")
            continue
        a, b, c = oracle.fit(kind_rows)
        x = np.array([oracle.features(cfg, k) for cfg, k, _ in kind_rows])
        y = np.array([us for *_, us in kind_rows])
        rms = float(np.sqrt(np.mean(((x @ np.array([a, b, c]) - y) / y) ** 2)))
        area = kind_rows[0][0]["block_m"] * kind_rows[0][0]["block_n"] / (128 * 128)
        print(f"{kind:14s} a {a:6.3f} us per K block ({a / area:6.3f} per 128 x 128)  b {b:6.2f}  c {c:6.2f}  "
              f"rms {rms:.1%}  ({len(kind_rows)} shapes)")
    for plain in ("256x128", "128x192"):
        if plain not in rows or plain + "ts" not in rows:
            continue
        x, y = [], []
        for kind, code in ((plain, 0), (plain + "ts", 1)):
            for cfg, k, us in rows[kind]:
                f = oracle.features(cfg, k)
                x.append([f[0], f[0] * code, f[1], f[2]])
                y.append(us)
        a, code_a, b, c = np.linalg.lstsq(np.array(x), np.array(y), rcond=None)[0]
        print(f"{plain} with and without the split's code: a {a:.3f}, the code {code_a / a:+.1%} per K block, "
              f"b {b:.2f}, c {c:.2f}")


if __name__ == "__main__":
    main([pathlib.Path(arg) for arg in sys.argv[1:]])
