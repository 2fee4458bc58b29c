#!/usr/bin/env bash
# Contiguous groups of 512-1024 rows over long K: the model's tiles against forced 256-row ones, which walk segments
# there (heuristics.cc step 11). The model charges 256-row tiles G - 1 extra M blocks for tiles that straddle two
# experts. With the walk no tile straddles, and a segment of an odd block count costs one 128-row tile, about G / 4
# extra on random sizes. So where the model takes 128-row tiles for such groups, 256 may win (NOTES 65, left open).
# Run in session 31 (NOTES 66): 256 won by 3-17%, which step 12 (grouped_tall.sh) now takes; on its own, the
# straddle count would not have changed the picks.
# One build, the model's tiles / DG_TUNE_BLOCK_M=256 alternating, two rounds (the first compiles: a longer limit);
# groups drawn as the table draws them; each run's configurations (DG_PRINT_CONFIGS) and times in its own log.
#     bash benchmarks/experiments/contiguous_mid_groups.sh     (one device call)
. "$(dirname "$0")/prelude.sh"
build
shapes=(contiguous=8,1024,7168,7168 contiguous=8,512,7168,7168 contiguous=16,512,4096,7168
        contiguous=4,1024,7168,4096)
for round in 1 2; do
  for block_m in model 256; do
    log="$OUT/round${round}_$block_m.txt"
    if [ $block_m = model ]; then unset DG_TUNE_BLOCK_M; else export DG_TUNE_BLOCK_M=256; fi
    DG_PRINT_CONFIGS=1 timeout -k 5 $((round == 1 ? 180 : 90)) python benchmarks/experiments/grouped_rows.py \
      "${shapes[@]}" >"$log" 2>&1
    echo "# round $round, BLOCK_M $block_m"
    grep grouped "$log" | grep -v "^jax_deepgemm"
  done
done | tee "$OUT/contiguous_mid_groups_times.txt"
