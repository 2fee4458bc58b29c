"""Per shape of masked_draw_oracle.sh's rows.txt (lines labelled model / 128x128 / 128x160 / 128x192 / 256x128): the
geometric mean over draws of the fastest forced tile's time against the model's pick's (the bound for a tile chosen
per launch), how often each tile was the fastest, and each tile's own geometric mean against the model's (a static
choice).

    python benchmarks/experiments/masked_draw_oracle.py rows.txt
"""

import collections
import math
import sys

FORCED = ["128x128", "128x160", "128x192", "256x128"]
times, picks = {}, {}
for line in open(sys.argv[1]):
    f = line.split()  # label masked G expected N K draw D rows R m_blocks B T us F TFLOPS tile
    if len(f) < 14 or f[1] != "masked":
        continue
    shape, draw = " x ".join(f[2:6]), int(f[7])
    times[f[0], shape, draw] = float(f[12])
    if f[0] == "model":
        picks[shape] = " ".join(f[16:])

geomean = lambda v: 100 * (math.exp(sum(map(math.log, v)) / len(v)) - 1)  # noqa: E731
every = []
for shape in picks:
    draws = sorted(d for label, s, d in times if label == "model" and s == shape)
    model = {d: times["model", shape, d] for d in draws}
    fastest = {d: min(FORCED, key=lambda t: times[t, shape, d]) for d in draws}
    best = [times[fastest[d], shape, d] / model[d] for d in draws]
    every += best
    static = " ".join(f"{t} {geomean([times[t, shape, d] / model[d] for d in draws]):+.1f}%" for t in FORCED)
    print(f"{shape:26s} model {picks[shape]:12s} per draw {geomean(best):+5.1f}%  "
          f"fastest {dict(collections.Counter(fastest.values()))}; static: {static}")
print(f"all {len(every)} draws: per draw {geomean(every):+.1f}%")
