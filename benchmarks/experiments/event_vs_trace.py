"""CUDA events around one launch (the .dgprobe launchers' timing) against the kernel's own duration in a trace
(the table's method: profiler kernel time), on the same launches (NOTES 78). Reads a launcher's stdout (its
'#   times (us):' lines, one per timed row, and the row lines after them) and the kernel durations of its run in
order, either `nsys stats -r cuda_gpu_trace -f csv` or `ncu --csv --metrics gpu__time_duration.sum`:

    python benchmarks/experiments/event_vs_trace.py LAUNCHER_STDOUT TRACE_CSV [LAUNCHES_BEFORE_TIMED]

Each row launches LAUNCHES_BEFORE_TIMED kernels (default 6: the check and five warm-ups) before its timed ones.
"""

import csv
import itertools
import statistics
import sys


def kernel_durations_us(path: str) -> list[float]:
    """Durations of the launcher's GEMM kernels (names with 'fp8'), in launch order."""
    with open(path) as f:
        lines = f.readlines()
    header = next(i for i, line in enumerate(lines) if "Duration" in line or "Metric Value" in line)
    rows = list(csv.DictReader(lines[header:]))  # (the tools print banner lines above the table)
    if rows and "Metric Value" in rows[0]:  # ncu: one row per kernel and metric
        scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
        return [float(r["Metric Value"].replace(",", "")) * scale[r["Metric Unit"]]
                for r in rows if "fp8" in r["Kernel Name"] and r["Metric Name"] == "gpu__time_duration.sum"]
    duration = next(k for k in rows[0] if k.startswith("Duration"))
    name = next(k for k in rows[0] if k.startswith("Name"))
    return [float(r[duration]) * 1e-3 for r in rows if "fp8" in r[name]]


def main(stdout_path: str, trace_path: str, before: int = 6) -> None:
    timed, labels = [], []
    for line in open(stdout_path):
        if line.startswith("#   times (us):"):
            timed.append([float(v) for v in line.split(":", 1)[1].split()])
        elif line.startswith("deepgemm") and len(labels) < len(timed):
            labels.append(" ".join(itertools.takewhile(lambda v: "." not in v, line.split())))  # name, shape
    durations = kernel_durations_us(trace_path)
    expected = sum(before + len(t) for t in timed)
    if len(durations) != expected:
        sys.exit(f"{len(durations)} GEMM kernels in the trace, {expected} expected: the rows cannot be matched")
    print(f"{'row':40s} {'events us':>10s} {'trace us':>10s} {'events - trace':>15s}")
    at = 0
    for label, events in zip(labels, timed):
        trace = durations[at + before: at + before + len(events)]
        at += before + len(events)
        ev, tr = statistics.median(events), statistics.median(trace)
        gap = statistics.median(e - t for e, t in zip(events, trace))
        print(f"{label:40s} {ev:10.2f} {tr:10.2f} {gap:9.2f} ({gap / tr:+.1%})")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(int(v) for v in sys.argv[3:4]))
