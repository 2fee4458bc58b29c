#!/usr/bin/env bash
# Why the next contiguous tile's ids prefetched into L1 cost 1.3-5.4% (NOTES 141): three sides against HEAD, one
# build, two rounds, on the rows of session 95's 04_ (contiguous_ids_ahead.sh) (ragged rows come along as the control).
#   prefetch  contiguous_ids_ahead.patch (as measured in 141)
#   peek      contiguous_ids_peek.patch: the scheduler copy finds the next tile, nothing is loaded or prefetched
#   regs      contiguous_ids_registers.patch: the next tile's ids loaded into registers, used at the switch
# Predicted: peek within 0.5% of old (a few dozen instructions per tile), so the prefetch instruction itself holds
# the producer warp; regs level or better at 128 x 160 (no spills), worse at 256 x 128 (its spills).
#   bash benchmarks/experiments/contiguous_ids_sides.sh      one device call, ~7 min (rows only, no tests)
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
for side in prefetch:ahead peek:peek regs:registers; do
  ab_side "${side%%:*}" "benchmarks/experiments/contiguous_ids_${side#*:}.patch" || exit 1
done
shapes=(contiguous contiguous=16,1024,4096,2048 contiguous=32,512,7168,2048 contiguous=8,2048,4096,7168)
AB_SIDES="prefetch peek regs old" ab_side_rounds 2 100 benchmarks/experiments/grouped_rows.py "${shapes[@]}"
ab_use old
ab_pack
echo "done in $((SECONDS - start)) s"
