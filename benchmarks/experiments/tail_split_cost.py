"""Summary of tail_split_cost.sh: per tile and K, from the means of each side's rounds (us),
- the split code's cost on whole tiles: ts1 against ts0 on one round (132 tiles) and on two (264);
- R, the second round's time (264 tiles less 132, ts1), and the split round's (187 tiles less 132, ts1) against R / 2;
- ts0 on 187 tiles (the model's grid there, 128 or 94 CTAs, no split) against 132 tiles.

    python benchmarks/experiments/tail_split_cost.py rows.txt
"""

import re
import sys
from collections import defaultdict

ROW = re.compile(r"^([ab]\d+x\d+)_ts([01]) r\d+\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+) us")

samples = defaultdict(list)
for line in open(sys.argv[1]):
    if m := ROW.match(line):
        tile, ts, n_, k, us = m[1][1:], int(m[2]), int(m[4]), int(m[5]), float(m[6])
        samples[tile, ts, n_, k].append(us)
mean = {key: sum(v) / len(v) for key, v in samples.items()}
for tile in sorted({key[0] for key in mean}):
    ns = sorted({key[2] for key in mean if key[0] == tile})  # N of 132, 187 and 264 tiles, in order
    one, split, two = ns
    for k in sorted({key[3] for key in mean if key[0] == tile}):
        t = {(ts, n): mean.get((tile, ts, n, k)) for ts in (0, 1) for n in ns}
        if None in t.values():
            print(f"{tile} K={k}: sides missing")
            continue
        r = t[1, two] - t[1, one]
        s = t[1, split] - t[1, one]
        print(f"{tile} K={k}: one round {t[0, one]:.1f} / {t[1, one]:.1f} us (ts0 / ts1, "
              f"{t[1, one] / t[0, one] - 1:+.1%}), two {t[0, two]:.1f} / {t[1, two]:.1f} "
              f"({t[1, two] / t[0, two] - 1:+.1%});"
              f" R {r:.1f}, split round {s:.1f} = {s / r:.2f} R (R / 2 + {s - r / 2:.1f} us);"
              f" ts0 on 187 tiles {t[0, split]:.1f} (+{t[0, split] - t[0, one]:.1f} over one round)")
