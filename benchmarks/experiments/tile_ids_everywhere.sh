#!/usr/bin/env bash
# Every published tile from the tile ids' warp (tile_ids_everywhere.patch): k-grouped GEMMs (dynamic by default) and
# dense ones with dynamic tiles forced take their tiles from it too, as contiguous, ragged and masked ones do since
# NOTES 144 / 146; k-grouped tiles publish their K range and D rows too (kTileIdWords 10). No mode keeps the queue
# warp, so TileQueue keeps only the path between a cluster's two tile ids' warps (-40 lines). Compiled with NVRTC 13.5
# (NOTES 147): contiguous, ragged and masked kernels' SASS unchanged; k-grouped 256 x 128 c2 K loops 402 / 364 -> 406 /
# 365 instructions (4 UMOVs, an IMAD made uniform), R2UR 35 -> 47, WARPSYNC.COLLECTIVE 5 -> 10 outside the K loops.
# Predicted against old: k-grouped 0% to -1% (the readers' K-segment walk and tile arithmetic gone from the tile
# switch), the rest level (contiguous and ragged: the control); dense with dynamic tiles forced (ddyn) level with old's.
#   bash benchmarks/experiments/tile_ids_everywhere.sh rows      two rounds: the table's k-grouped rows, MoE weight
#                                                                gradients' shapes, a contiguous/ragged control, dense
#                                                                rows with dynamic tiles forced (~5 min)
#   bash benchmarks/experiments/tile_ids_everywhere.sh tests     side new's k-grouped and dynamic-tile GPU cases (the
#                                                                grouped and configs files, 8 processes of 220 s)
#   bash benchmarks/experiments/tile_ids_everywhere.sh sanitize  racecheck and memcheck of side new's k-grouped and
#                                                                dynamic-tile cases
# Landed in aa7a915 (NOTES 147): ab_patch_sides takes HEAD as side new and HEAD with the patch reversed as old.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_patch_sides benchmarks/experiments/tile_ids_everywhere.patch
case "${1:-rows}" in
  rows)
    shapes=(k_grouped k_grouped_bf16=16,2048,7168,1024 k_grouped_bf16=16,7168,2048,1024 k_grouped=8,2048,7168,2048
            contiguous=8,4096,7168,2048)
    for round in 1 2; do
      for side in new old; do
        ab_run_side "$side r$round" "$side" 150 benchmarks/experiments/grouped_rows.py "${shapes[@]}"
        ab_run_side "ddyn_$side r$round" "$side" 100 benchmarks/experiments/dense_rows.py 4096,7168,2048 \
          4096,2112,7168 2048,7168,16384 -- DG_TUNE_DYNAMIC_TILES=1
      done
    done
    ;;
  tests)
    ab_side_tests new "k_grouped or dynamic" 8 "${JDG_WHOLE_TEST_LIMIT:-220}" tests/test_gpu_grouped.py \
      tests/test_gpu_configs.py
    ;;
  sanitize)
    ab_sanitize "k_grouped and (not configs or bm256-x1 or bm256-x2 or bm128-x2 or dynamic) or dynamic"
    ;;
esac
ab_use new
ab_pack
echo "done in $((SECONDS - start)) s"
