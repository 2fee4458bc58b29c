#!/usr/bin/env bash
# Does a kernel's speed depend on its pipeline stages (benchmarks/NOTES.md 56)? The masked K = 2048 rows' 128 x 128
# loop waits on both ends (consumers for data 18-23%, the producer for free stages 38%), which fits too few stages
# for the copies' latency. DG_TUNE_STAGES caps the stages: if the masked rows slow down steeply from 5 to 4 to 3
# stages, a sixth (which needs a smaller TMA-store staging tile: it misses the 227 KB by 2 KB) is worth building.
# The 256 x 128 and 128 x 192 dense rows (3 and 4 stages) against 2 and 3 are the control for loops that the
# consumers pace. Kernel time, sides alternating, two rounds; then DG_PROFILE_WAITS of masked 1 x 952 at 5 / 4 / 3.
#   bash benchmarks/experiments/stages.sh      (one device call, ~4 min; logs under $OUT)
. "$(dirname "$0")/prelude.sh"
build
dense=(4096,7168,2048 4096,24576,1536 4096,2112,7168 2048,2112,7168)
for round in 1 2; do
  for cap in 0 4 3; do
    echo "# round $round, DG_TUNE_STAGES=$cap"
    DG_TUNE_STAGES=$cap timeout -k 5 60 python benchmarks/experiments/grouped_rows.py masked 2>&1 | grep masked
  done
  for cap in 0 2; do
    echo "# round $round, DG_TUNE_STAGES=$cap (dense)"
    DG_TUNE_STAGES=$cap timeout -k 5 60 python benchmarks/experiments/dense_rows.py "${dense[@]}" 2>&1 | grep -E "^ *[0-9]"
  done
done | tee "$OUT/stages.txt"
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=10
for cap in 0 4 3; do
  echo "## masked 1,4096,7168,2048,952,1024 DG_TUNE_STAGES=$cap"
  DG_TUNE_STAGES=$cap timeout -k 5 60 python tools/profile_one.py masked 1,4096,7168,2048,952,1024 2>&1 |
    grep -v -E "^I[0-9]|^E[0-9]{4} |^W[0-9]{4} "
done >"$OUT/waits.log"
python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
