"""Means of a masked A/B (masked_wide.sh's rows.txt: masked_draws.py lines and moe_models.py decode lines, labelled
newR / oldR): per row (shape and draw) the two sides' mean kernel times, their tiles and the change, then geometric
means per shape and over all rows.

    python benchmarks/experiments/masked_ab.py rows.txt
"""

import collections
import math
import sys

times, tiles = collections.defaultdict(list), {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 5 or f[0][:3] not in ("new", "old"):
        continue
    side = f[0][:3]
    if f[1] == "masked":  # masked_draws.py: label masked G expected N K draw D rows R m_blocks B T us ... tile
        row, us, tile = " ".join(f[2:6]) + " d" + f[7], float(f[12]), " ".join(f[16:])
    else:  # moe_models.py: label name decode masked T us F TFLOPS tile ...
        row, us, tile = f[1], float(f[4]), f[8]
    times[side, row].append(us)
    tiles[side, row] = tile

rows = list(dict.fromkeys(row for _, row in times))
mean = lambda v: sum(v) / len(v)  # noqa: E731
geomean = lambda v: 100 * (math.exp(sum(map(math.log, v)) / len(v)) - 1)  # noqa: E731
per_shape, ratios = collections.defaultdict(list), []
for row in rows:
    new, old = mean(times["new", row]), mean(times["old", row])
    ratios.append(new / old)
    per_shape[row.rsplit(" d", 1)[0]].append(new / old)
    print(f"{row:22s} new {new:7.1f} {tiles['new', row]:14s} old {old:7.1f} {tiles['old', row]:14s} "
          f"{100 * (new / old - 1):+6.1f}%")
print("per shape (geometric mean, least, most):")
for shape, r in per_shape.items():
    print(f"  {shape:20s} {geomean(r):+6.1f}%  {100 * (min(r) - 1):+6.1f}% {100 * (max(r) - 1):+6.1f}%")
print(f"all {len(ratios)} rows: {geomean(ratios):+.2f}%")
