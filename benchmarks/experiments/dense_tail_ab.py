"""Summary of dense_tail_rounds.sh's output: per shape the mean of each side's rounds, new against old, and the
geometric mean per group of shapes (NAME:COUNT, the shapes in the script's order).

    python benchmarks/experiments/dense_tail_ab.py run.txt "in sample:8" "held out:12" controls:2
"""

import math
import sys
from collections import defaultdict

GROUPS = {name: int(count) for name, count in (arg.rsplit(":", 1) for arg in sys.argv[2:])}
times, order = defaultdict(list), []
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) < 6 or parts[0] not in ("new", "old") or parts[-1] != "TFLOPS":
        continue
    shape = "x".join(parts[2:5])
    if shape not in order:
        order.append(shape)
    times[shape, parts[0]].append(float(parts[5]))
start = 0
for group, count in GROUPS.items():
    ratios = []
    for shape in order[start:start + count]:
        new, old = (sum(times[shape, s]) / len(times[shape, s]) for s in ("new", "old"))
        ratios.append(new / old)
        print(f"{group:10s} {shape:18s} old {old:8.1f} new {new:8.1f} us {100 * (new / old - 1):+6.1f}%  "
              f"rounds old {times[shape, 'old']} new {times[shape, 'new']}")
    if ratios:
        print(f"{group:10s} geometric mean {100 * (math.exp(sum(map(math.log, ratios)) / len(ratios)) - 1):+.1f}%")
    start += count
