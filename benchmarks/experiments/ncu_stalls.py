"""Sums up `ncu --page source --csv --print-source sass` output (gzip or plain, path as the argument): the stall
reasons over all warp samples, then the instructions with the most samples and each one's main reason.

    python benchmarks/experiments/ncu_stalls.py ncu_source_sass.csv.gz [top]
"""

import collections
import csv
import gzip
import sys


def main():
    path, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        rows = list(csv.reader(f))
    header, data = rows[1], rows[2:]  # rows[0] names the kernel
    col = {h: i for i, h in enumerate(header)}
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    count = lambda r, c: int(r[col[c]] or 0)  # noqa: E731
    totals = collections.Counter({c: sum(count(r, c) for r in data) for c in reasons})
    samples = sum(totals.values())
    print(f"{rows[0][1]}: {samples} warp samples")
    for c, v in (cv for cv in totals.most_common() if cv[1]):
        print(f"  {c:26s} {v:8d} {100 * v / samples:5.1f}%")
    print("instructions with the most samples (index in the listing, samples, share, main reason):")
    ranked = sorted(enumerate(data), key=lambda nr: -count(nr[1], "Warp Stall Sampling (All Samples)"))
    for n, r in ranked[:top]:
        v = count(r, "Warp Stall Sampling (All Samples)")
        print(f"  {n:5d} {v:7d} {100 * v / samples:5.1f}%  {r[col['Source']].strip()[:58]:58s} "
              f"{max(reasons, key=lambda c: count(r, c))}")


if __name__ == "__main__":
    main()
