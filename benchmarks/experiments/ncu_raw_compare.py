"""Side by side: the metrics of one kernel in each of several `ncu --import X --page raw --csv` files (gzip or
plain; the first kernel row of each), those whose names contain any of the given substrings, with each file's value
over the first file's. Rows where every value is zero are left out. (NOTES 81 read session 41's L2 counts this way.)

    python benchmarks/experiments/ncu_raw_compare.py dg_raw.csv.gz ours_raw.csv.gz -- lts__t_requests xbar2l1tex
"""

import csv
import gzip
import sys


def first_kernel(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    names, units, values = rows[0], rows[1], rows[2]  # header, units, the first profiled kernel
    return {n: (v, u) for n, u, v in zip(names, units, values)}


def as_number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main(argv):
    split = argv.index("--") if "--" in argv else len(argv)
    paths, patterns = argv[:split], argv[split + 1:] or ["lts__t_"]
    tables = [first_kernel(p) for p in paths]
    for name in sorted(tables[0]):
        if not any(p in name for p in patterns):
            continue
        values = [t.get(name, ("-", ""))[0] for t in tables]
        numbers = [as_number(v) for v in values]
        if all(x == 0 for x in numbers):
            continue
        base = numbers[0]
        ratios = [f"{x / base:.3f}" if base and x is not None else "" for x in numbers[1:]]
        print(f"{name[:72]:72s} " + " ".join(f"{v:>14s}" for v in values) + "  " + " ".join(ratios) +
              f"  {tables[0][name][1]}")


if __name__ == "__main__":
    main(sys.argv[1:])
