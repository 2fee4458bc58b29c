"""Per-CTA durations of the last profiled launch (DG_PROFILE_WAITS lines on stdin), grouped by the K blocks each CTA
ran: where a tail-split kernel's second round goes (NOTES 79). A CTA with one whole tile ran K blocks = the tile's;
one that also ran half a split tile and stored it (part 0) ran 1.5x that (the K blocks are counted once per tile, so
part 1 shows the whole tile's). Prints per group the CTAs, their duration (us: min / median / max), epilogue cycles
and SM clock, then the longest CTA. CTAs 0 and 1 are left out: in 256-row kernels they record the K loop's timeline
(kTraceCtas), whose stores made them run 30-45% longer in NOTES 79's runs.

    DG_PROFILE_WAITS=1 python tools/profile_one.py masked 1,4096,4096,7168,1108,1024 2>&1 |
        python benchmarks/experiments/tail_round.py
"""

import re
import statistics
import sys

LINE = re.compile(r"cta (\d+) consumer \(full stages\) waited (\d+) of (\d+) cycles in (\d+) ns; "
                  r"epilogues (\d+) cycles, (\d+) K blocks")

records = []
for line in sys.stdin:
    m = LINE.search(line)
    if m:
        records.append(tuple(int(v) for v in m.groups()))
if not records:
    sys.exit("no consumer lines")
# One line per CTA and launch, launch after launch (the report kernel's threads print a launch's lines in any order):
# the last launch is the last `grid` lines.
grid = len({r[0] for r in records})
launches = [records[i:i + grid] for i in range(0, len(records), grid)]
TRACE_CTAS = 2  # fp8_gemm_config.cuh's kTraceCtas
last = {r[0]: r[1:] for r in launches[-1] if r[0] >= TRACE_CTAS}
groups = {}
for cta, rec in last.items():
    groups.setdefault(rec[4], []).append((cta, rec))
for kbs, rows in sorted(groups.items()):
    ns = sorted(r[2] for _, r in rows)
    epi = statistics.median(r[3] for _, r in rows)
    wait = statistics.median(r[0] / r[1] for _, r in rows)
    mhz = statistics.median(r[1] / r[2] * 1e3 for _, r in rows)
    ctas = sorted(c for c, _ in rows)
    print(f"{kbs:4d} K blocks: {len(rows):3d} CTAs ({ctas[0]}..{ctas[-1]}), us {ns[0] / 1e3:.1f} / "
          f"{statistics.median(ns) / 1e3:.1f} / {ns[-1] / 1e3:.1f}, epilogues {epi:.0f} cycles, "
          f"waits {100 * wait:.0f}%, "
          f"{mhz:.0f} MHz")
longest = max(last.items(), key=lambda kv: kv[1][2])
print(f"longest CTA {longest[0]}: {longest[1][2] / 1e3:.1f} us, {longest[1][4]} K blocks ({len(launches)} launches)")
