#!/usr/bin/env bash
# Prepared, not run (NOTES 124): the profile build's timeline of a ragged group's one-row last tile against the same
# CTAs' full tiles, at the MoE step's two shapes (tail_trace.py). One device call, a few minutes.
. "$(dirname "$0")/prelude.sh"
build
for nk in 4096,7168 7168,2048; do
  DG_PROFILE_WAITS=1 timeout -k 5 150 python benchmarks/experiments/tail_trace.py run $nk > "$OUT/trace_$nk.log" 2>&1
  python benchmarks/experiments/tail_trace.py summarize < "$OUT/trace_$nk.log" | tee "$OUT/tail_trace_$nk.txt"
done
