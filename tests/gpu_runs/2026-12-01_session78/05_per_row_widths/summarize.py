"""Means of the two rounds in rows.txt per shape and out kind, each forced width against the model's pick (run here:
the run's own summary misread the lines). Lines that are not timings (the 144- and 160-wide tiles, which 256-row
tiles do not take with 1x128 B scales, printed tracebacks) are skipped.

    python summarize.py rows.txt > summary.txt
"""
import collections
import sys

t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()  # r1 VARIANT bf16|out=f32 M N K [out=f32] US us TFLOPS TFLOPS
    if len(f) not in (10, 11):
        continue
    us = float(f[len(f) - 1 - f[::-1].index("us") - 1])
    t[(f[3], f[4], f[5], "f32" if "out=f32" in f else "bf16"), f[1]].append(us)
for k in sorted({k for k, _ in t}, key=lambda k: (k[3], int(k[0]), int(k[1]), int(k[2]))):
    p = t[k, "pick"]
    pick = sum(p) / len(p)
    row = [f"{'x'.join(k[:3]):16s} {k[3]:4s} pick {pick:7.1f} ({p[0]:.1f},{p[1]:.1f})"]
    for v in ("N96", "N112", "N128"):
        us = sum(t[k, v]) / len(t[k, v])
        row.append(f"{v} {us:7.1f} ({100 * (us / pick - 1):+5.1f}%)")
    print("  ".join(row))
