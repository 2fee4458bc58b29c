#!/usr/bin/env bash
# B-scale block pointers kept in one register pair per published tile (published_b_scale_pointer.patch): an empty asm
# on each pointer in kernels with the tile ids' warp (every grouped mode, dense with dynamic tiles forced), so that
# ptxas stops rebuilding the 64-bit address from the tile's uniform fields in the K loops (NOTES 147: the dense 128 x
# 192 loop grew 179 -> 187 instructions with published tiles). NOTES 93 measured the same form on the queue warp's
# ragged and masked kernels: masked +0.2% to +2.2%, ragged 256 x 128 +0.9% at K = 7168. Compiled (NOTES 148): dense
# 128 x 192 split halves, dynamic 187 -> 180, masked 128 x 192 186 -> 179, masked 128 x 128 131 -> 128, ragged and
# contiguous 256 x 128 -2 each; no spill added.
#   bash benchmarks/experiments/published_b_scale_pointer.sh rows  two rounds: the table's masked, contiguous and
#                                                                  ragged rows, two dense rows with dynamic tiles forced
# Measured in NOTES 148 (grouped kernels slower, dense with dynamic tiles faster); taken for that dense form only in
# the next commit, so the patch applies to b94902c's headers (check out b94902c's cuda/ to re-run it).
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_patch_sides benchmarks/experiments/published_b_scale_pointer.patch
case "${1:-rows}" in
  rows)
    for round in 1 2; do
      for side in new old; do
        ab_run_side "$side r$round" "$side" 90 benchmarks/experiments/grouped_rows.py masked contiguous
        ab_run_side "ddyn_$side r$round" "$side" 60 benchmarks/experiments/dense_rows.py 4096,2112,7168 \
          2048,7168,16384 -- DG_TUNE_DYNAMIC_TILES=1
      done
    done
    ;;
esac
ab_use new
ab_pack
echo "done in $((SECONDS - start)) s"
