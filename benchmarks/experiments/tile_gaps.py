"""What a tile boundary costs the two-wave K loop (NOTES 79): reads the K loop's timeline (DG_PROFILE_WAITS builds
print "jax_deepgemm trace: cta C wg W cycles tag", tag = tile * 4096 + K block * 16 + wave * 4 + event, event 0
wgmmas issued, 1 done, 2 promoted) of the last launch on stdin; for each traced CTA and warpgroup, medians over its
tiles after the first of: the gap from the previous tile's last promotion to this tile's first issue (the
epilogue and whatever the next tile waits for), and the first K block's issue-to-done and done-to-promoted per wave
against the same medians inside the tiles (K blocks 2 .. last - 2), and the median K block period inside the tiles;
the gap's parts where the build traces them: the epilogue, the next pass's setup, its wait for its first stage, and
the rest to its first issue (each part holds one trace store, ~60 cycles).

    DG_PROFILE_WAITS=1 python tools/profile_one.py dense 4096,7168,2048 2>&1 |
        python benchmarks/experiments/tile_gaps.py
"""

import statistics
import sys

from wave_trace import last_launch  # the same timeline lines, the last launch's (this script's folder is on the path)


def main():
    med = lambda xs: statistics.median(xs) if xs else float("nan")  # noqa: E731
    for (cta, wg), events in sorted(last_launch(sys.stdin).items()):
        ev = {}
        for t, tag in events:
            ev[(tag // 4096, (tag // 16) % 256, (tag // 4) % 4, tag % 4)] = t
        tiles = sorted({k[0] for k in ev})
        kbs = {i: sorted({k[1] for k in ev if k[0] == i and k[1] < 253}) for i in tiles}
        whole = [i for i in tiles if kbs[i] and all((i, kb, v, x) in ev for kb in kbs[i] for v in (0, 1)
                                                     for x in (0, 1, 2))]
        gaps, first = [], {(v, x): [] for v in (0, 1) for x in ("run", "promo")}
        body = {(v, x): [] for v in (0, 1) for x in ("run", "promo")}
        periods, parts = [], []
        for i in whole:
            last = kbs[i][-1]
            for kb in kbs[i]:
                for v in (0, 1):
                    run = ev[(i, kb, v, 1)] - ev[(i, kb, v, 0)]
                    promo = ev[(i, kb, v, 2)] - ev[(i, kb, v, 1)]
                    if kb == 0:
                        first[(v, "run")].append(run)
                        first[(v, "promo")].append(promo)
                    elif 2 <= kb <= last - 2:
                        body[(v, "run")].append(run)
                        body[(v, "promo")].append(promo)
                if 2 <= kb <= last - 2 and (i, kb + 1, 0, 0) in ev:
                    periods.append(ev[(i, kb + 1, 0, 0)] - ev[(i, kb, 0, 0)])
            if i - 1 in whole:
                end = ev[(i - 1, kbs[i - 1][-1], 1, 2)]
                gaps.append(ev[(i, 0, 0, 0)] - end)
                if all((i, kb, 0, 3) in ev for kb in (253, 254, 255)):  # epilogue done (tagged with the next tile),
                    # the first stage about to be waited for, waited for
                    parts.append((ev[(i, 255, 0, 3)] - end, ev[(i, 253, 0, 3)] - ev[(i, 255, 0, 3)],
                                  ev[(i, 254, 0, 3)] - ev[(i, 253, 0, 3)], ev[(i, 0, 0, 0)] - ev[(i, 254, 0, 3)]))
        cells = [f"cta {cta} wg {wg}: {len(whole)} tiles of {len(kbs[whole[0]]) if whole else 0} K blocks",
                 f"period {med(periods):.0f}", f"boundary gap {med(gaps):.0f} (min {min(gaps, default=0)}, "
                 f"max {max(gaps, default=0)})"]
        if parts:
            cells.append("of it: epilogue %.0f, the next pass's setup %.0f, its first stage's wait %.0f, to its first "
                         "issue %.0f" % tuple(med([p[j] for p in parts]) for j in range(4)))
        for v in (0, 1):
            cells.append(f"wave{v} first K block issue->done {med(first[(v, 'run')]):.0f} (inside "
                         f"{med(body[(v, 'run')]):.0f}), done->promoted {med(first[(v, 'promo')]):.0f} (inside "
                         f"{med(body[(v, 'promo')]):.0f})")
        print("; ".join(cells))


if __name__ == "__main__":
    main()
