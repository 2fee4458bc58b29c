#!/usr/bin/env bash
# The profile build's timeline of a ragged group's one-row last tile against the same CTAs' full tiles, at the MoE
# step's two shapes (tail_trace.py; NOTES 124, 125). One device call, under a minute.
. "$(dirname "$0")/prelude.sh"
build
for nk in 4096,7168 7168,2048; do
  name=${nk/,/_}  # (the device tool returns no file with a comma in its name)
  DG_PROFILE_WAITS=1 timeout -k 5 150 python benchmarks/experiments/tail_trace.py run $nk > "$OUT/trace_$name.log" 2>&1
  python benchmarks/experiments/tail_trace.py summarize < "$OUT/trace_$name.log" | tee "$OUT/tail_trace_$name.txt"
done
