"""Our grouped and dense rows with plain calls, for a kernel-duration tool to time (Nsight Compute in
event_vs_trace.sh; NOTES 78): the rows scripts run with the profiler's trace and the back-to-back wall loop taken
out, so each call is one flush and one launch, JIT warm-ups first (bench.trace_flushed_calls: three, then `iters`).

    ncu ... python benchmarks/experiments/ncu_ours.py grouped_rows.py contiguous masked
    ncu ... python benchmarks/experiments/ncu_ours.py dense_rows.py 4096,7168,16384
    python benchmarks/experiments/ncu_ours.py --durations NCU_CSV ROWS_STDOUT   # medians per row
"""

import os
import runpy
import statistics
import sys

WARMUPS, ITERS = 3, 20  # per row: bench.trace_flushed_calls' warm-up calls; the rows scripts' timed calls

if sys.argv[1] == "--durations":
    sys.path.insert(0, os.path.dirname(__file__))
    from event_vs_trace import kernel_durations_us

    durations = kernel_durations_us(sys.argv[2])
    labels = [line.split(" us ")[0].rsplit(None, 1)[0] for line in open(sys.argv[3]) if " us " in line]
    per_row = WARMUPS + ITERS
    if len(durations) != per_row * len(labels):
        sys.exit(f"{len(durations)} kernels for {len(labels)} rows of {per_row} calls: cannot match")
    for i, label in enumerate(labels):
        timed = durations[i * per_row + WARMUPS:(i + 1) * per_row]
        print(f"{label:64s} {statistics.median(timed):9.2f} us (ncu, median of {len(timed)})")
    sys.exit(0)

from jax_deepgemm import bench  # noqa: E402

bench._trace_kernels = lambda fn: (fn(), [])[1]
bench.per_call_us = lambda *args: [1.0]
bench.wall_us_per_call = lambda *args: 1.0
script = os.path.join(os.path.dirname(__file__), sys.argv[1])
sys.argv = [script] + sys.argv[2:]
runpy.run_path(script, run_name="__main__")
