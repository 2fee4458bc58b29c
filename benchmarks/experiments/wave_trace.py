"""Sums up the two-wave K loop's timeline (DG_PROFILE_WAITS builds print it: "jax_deepgemm trace: cta C wg W
cycles tag", tag = tile * 4096 + K block * 16 + wave * 4 + event, event 0 wgmmas issued, 1 done, 2 promoted) of the
last launch in a log read on stdin: per CTA, medians over the K blocks of the first tile (its first and last 4 left
out) of the K block's period, each wave's issue-to-done and promotion cycles, how far warpgroup 1's waves trail
warpgroup 0's, and the share of the time with no wave of either warpgroup issued and not done (the tensor cores
idle, or at least without queued work); then the raw events of three K blocks.

    DG_PROFILE_WAITS=1 python tools/profile_one.py dense 4096,7168,16384 2>&1 |
        python benchmarks/experiments/wave_trace.py
"""

import re
import statistics
import sys

LINE = re.compile(r"jax_deepgemm trace: cta (\d+) wg (\d+) (\d+) (\d+)")


def last_launch(lines):
    launches, prev = [], None
    for line in lines:
        m = LINE.search(line)
        if not m:
            continue
        cta, wg, t, tag = (int(v) for v in m.groups())
        if prev is None or (cta, wg) < prev:
            launches.append({})
        launches[-1].setdefault((cta, wg), []).append((t, tag))
        prev = (cta, wg)
    return launches[-1] if launches else {}


def summarize(cta, wg_events):
    ev = [{} for _ in range(2)]
    for wg in (0, 1):
        for t, tag in wg_events.get(wg, []):
            tile, kb, wave, kind = tag // 4096, (tag // 16) % 256, (tag // 4) % 4, tag % 4
            if tile == 0 and kb < 253:  # (K blocks 253-255: tile_gaps.py's boundary events)
                ev[wg][(kb, wave, kind)] = t
    kbs = sorted({k[0] for e in ev for k in e})
    if not kbs:
        print(f"cta {cta}: no events")
        return
    body = [kb for kb in kbs if 4 <= kb < kbs[-1] - 4 and all((kb, v, x) in ev[w] for w in (0, 1) for v in (0, 1)
                                                            for x in (0, 1, 2)) and (kb + 1, 0, 0) in ev[0]]
    med = lambda xs: statistics.median(xs) if xs else float("nan")  # noqa: E731
    period = med([ev[0][(kb + 1, 0, 0)] - ev[0][(kb, 0, 0)] for kb in body])
    row = [f"cta {cta}: {len(body)} K blocks, period {period:.0f} cycles"]
    for w in (0, 1):
        for v in (0, 1):
            run = med([ev[w][(kb, v, 1)] - ev[w][(kb, v, 0)] for kb in body])
            promo = med([ev[w][(kb, v, 2)] - ev[w][(kb, v, 1)] for kb in body])
            row.append(f"wg{w} wave{v} issue->done {run:.0f} promote {promo:.0f}")
    for v in (0, 1):
        row.append(f"wave{v} done wg1-wg0 {med([ev[1][(kb, v, 1)] - ev[0][(kb, v, 1)] for kb in body]):.0f}")
    # Time with no wave in flight (issued, not done) over the body's span.
    spans = sorted((ev[w][(kb, v, 0)], ev[w][(kb, v, 1)]) for w in (0, 1) for v in (0, 1) for kb in body)
    start, end = spans[0][0], max(s[1] for s in spans)
    idle, reach = 0, start
    for a, b in spans:
        if a > reach:
            idle += a - reach
        reach = max(reach, b)
    row.append(f"no wave in flight {100.0 * idle / max(end - start, 1):.1f}% of {end - start} cycles")
    print("; ".join(row))
    for kb in body[len(body) // 2:len(body) // 2 + 3]:
        t0 = ev[0][(kb, 0, 0)]
        cells = [f"wg{w}.w{v} {ev[w][(kb, v, 0)] - t0}/{ev[w][(kb, v, 1)] - t0}/{ev[w][(kb, v, 2)] - t0}"
                 for w in (0, 1) for v in (0, 1)]
        print(f"  kb {kb} (issue/done/promoted, cycles from wg0's first issue): " + "  ".join(cells))


def main():
    launch = last_launch(sys.stdin)
    for cta in sorted({c for c, _ in launch}):
        summarize(cta, {wg: launch[(cta, wg)] for c, wg in launch if c == cta})


if __name__ == "__main__":
    main()
