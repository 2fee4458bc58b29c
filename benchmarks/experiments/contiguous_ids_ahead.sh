#!/usr/bin/env bash
# contiguous_ids_ahead.patch: with static tiles, the producer warp pulls the next contiguous tile's expert ids into
# L1 once a tile's first copies are out, so that the tile switch's id loads (producer, then consumers) hit L1.
# Predicted: contiguous rows -0.5% to -1.5% at K = 2048 (static ragged is 1.0-1.7% ahead of static contiguous on the
# same tiles, NOTES 138), less at K = 7168 (tiles 3.5x longer); ragged (dynamic tiles, untouched) level.
# Compiled (NVRTC 13.5, sm_90a): the 256 x 128 producers' local-memory instructions 25 -> 45 (segment walk) and
# 11 -> 12; the 128 x 160 kernel none.
# Measured (NVIDIA H200, 2026-12-02, NOTES 141): contiguous +1.3% to +5.4%, ragged level; not taken.
#   bash benchmarks/experiments/contiguous_ids_ahead.sh      one device call, ~7 min: side new's contiguous GPU tests,
#                                                             then the rows, two rounds
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side new benchmarks/experiments/contiguous_ids_ahead.patch || exit 1
ab_side_tests new "contiguous" 12 200 tests/test_gpu_grouped.py tests/test_gpu_configs.py
grep -hE "passed|failed" "$OUT"/tests_new_*.log | tail -8
shapes=(contiguous contiguous=16,1024,4096,2048 contiguous=32,512,7168,2048 contiguous=8,2048,4096,7168)
for round in 1 2; do
  for side in new old; do
    ab_run_side "$side r$round" $side 120 benchmarks/experiments/grouped_rows.py "${shapes[@]}"
  done
done
ab_use old; date -u >>"$OUT/machine.txt"
(cd "$OUT" && tar czf logs.tgz ./*.log ./*.diff && rm -f ./*.log ./*.diff)
echo "done in $((SECONDS - start)) s"
