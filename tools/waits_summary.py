"""Sums up the DG_PROFILE_WAITS lines of `gpu_session.sh waits` per kernel: reads the log on stdin (sections start
with "## <case>"), prints per section the consumers' cycles per K block (mean, min, max over every CTA of every
launch), the share of their cycles spent waiting on full stages and in epilogues (first consumer warpgroup; the
second one's wait share too where the kernel has two), the producers' share waiting on empty stages, and the SM clock
(cycles over nanoseconds; the mean over CTAs), also for the last launch alone, with its CTAs' cycles from the
fastest to the slowest (how unevenly they finish: the tile order's imbalance, and the SMs' clocks).

    bash tools/gpu_session.sh waits        # calls this on its log
    python tools/waits_summary.py < waits.log
"""

import re
import statistics
import sys

LINE = re.compile(r"cta (\d+) (producer|consumer1?) \S+ stages\) waited (\d+) of (\d+) cycles in (\d+) ns; "
                  r"epilogues (\d+) cycles, (\d+) K blocks")


def summary(case: str, rows: list[tuple]) -> str:
    all_cons = [r for r in rows if r[1] == "consumer"]
    cons = [r for r in all_cons if r[6] > 0]  # a CTA without a K block (more CTAs than tiles) has no rate
    prod = [r for r in rows if r[1] == "producer"]
    second = [r for r in rows if r[1] == "consumer1" and r[6] > 0]  # the second consumer warpgroup, if any
    if not cons:
        return f"{case}: no consumer lines"
    # The last launch (lines come launch by launch: printf's buffer is flushed at each synchronisation) shows the
    # clock after the earlier ones warmed the GPU up.
    grid = max(r[0] for r in all_cons) + 1
    last = [r for r in all_cons[-grid:] if r[6] > 0]
    last_mhz = statistics.mean(r[3] / r[4] * 1e3 for r in last if r[4] > 0)
    last_kb = statistics.mean(r[3] / r[6] for r in last)
    last_cycles = [r[3] for r in last]  # each CTA's whole run: spread by the tile order and by the SMs' clocks
    per_kb = [r[3] / r[6] for r in cons]
    share = lambda num, rs: sum(num(r) for r in rs) / sum(r[3] for r in rs)  # noqa: E731
    mhz = statistics.mean(r[3] / r[4] * 1e3 for r in cons if r[4] > 0)
    return (f"{case}: {len(cons)} CTA runs (CTAs x launches), cycles/K block {statistics.mean(per_kb):.0f} "
            f"(min {min(per_kb):.0f}, max {max(per_kb):.0f}); consumer waits {100 * share(lambda r: r[2], cons):.0f}%, "
            f"epilogues {100 * share(lambda r: r[5], cons):.1f}%; "
            + (f"warpgroup 1 waits {100 * share(lambda r: r[2], second):.0f}%; " if second else "")
            + f"producer waits {100 * share(lambda r: r[2], prod) if prod else 0:.0f}%; SM clock {mhz:.0f} MHz; "
            f"last launch {last_kb:.0f} cycles/K block at {last_mhz:.0f} MHz, its CTAs' cycles {min(last_cycles)} to "
            f"{max(last_cycles)} (the slowest {100 * (max(last_cycles) / statistics.mean(last_cycles) - 1):.1f}% over "
            f"the mean)")


def main():
    case, rows, out = None, [], []
    for line in sys.stdin:
        if line.startswith("## "):
            if case is not None:
                out.append(summary(case, rows))
            case, rows = line[3:].strip(), []
        elif m := LINE.search(line):
            g = m.groups()
            rows.append((int(g[0]), g[1], int(g[2]), int(g[3]), int(g[4]), int(g[5]), int(g[6])))
    if case is not None:
        out.append(summary(case, rows))
    print("\n".join(out))


if __name__ == "__main__":
    main()
