#!/usr/bin/env bash
# Ragged and masked tiles published whole (grouped_whole_tiles.patch), as contiguous ones are since NOTES 144: the tile
# ids' warp is the only one that walks the tiles (the group walk's loads and warp-collective scans), publishing each
# tile's variable fields (the group among them) in shared memory; with dynamic tiles (ragged's default) it takes each
# index itself, without a queue warp. The producer warp and the consumers take the tile from the slot.
# Compiled with NVRTC 13.5 (NOTES 145): ragged 256 x 128 K loops 1-2 instructions shorter, WARPSYNC.COLLECTIVE 6
# (HEAD 11 / 14); masked with dynamic tiles as uniform as static (R2UR 32 / 32; HEAD 29 / 41); masked 128 x 128 K = 2048
# first K loop 238 instructions (HEAD 231: the B-scale address in uniform registers).
# Predicted against old: ragged -0% to -1% (no group walk on the readers' path), masked static level (one group),
# masked with dynamic tiles forced (mdyn, DG_TUNE_DYNAMIC_TILES=1: the K = 2048 rows; the tail split keeps the K = 7168
# ones static) -1% to -3%, contiguous level (the control).
#   bash benchmarks/experiments/grouped_whole_tiles.sh rows      two rounds of the sides' rows (~6 min)
#   bash benchmarks/experiments/grouped_whole_tiles.sh moe       moe_models.py's ragged layers (even and skewed) and
#                                                                masked decode rows, sides new and old, two rounds
#   bash benchmarks/experiments/grouped_whole_tiles.sh tests     side new's ragged and masked GPU cases (14 processes of
#                                                                220 s), then the forced dynamic-tile ones (~8 min)
#   bash benchmarks/experiments/grouped_whole_tiles.sh sanitize  racecheck and memcheck of side new's ragged and masked
#                                                                cases (the grouped file's, forced 256-row, cluster,
#                                                                dynamic-tile and tail-split configurations)
# Landed in 0b5deba: where the headers as sent hold the patch, side new is them and side old them with the patch
# reversed (the same kernels as before it; only comments differ), else as before, new = the headers + the patch.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_patch_sides benchmarks/experiments/grouped_whole_tiles.patch
case "${1:-rows}" in
  rows)
    shapes=(contiguous masked contiguous=16,1024,4096,2048 contiguous=32,512,7168,2048 masked=32,32,4096,7168
            masked=8,128,7168,2048)
    for round in 1 2; do
      ab_run_side "new r$round" new 120 benchmarks/experiments/grouped_rows.py "${shapes[@]}"
      ab_run_side "mdyn r$round" new 120 benchmarks/experiments/grouped_rows.py "${shapes[@]}" -- \
        DG_TUNE_DYNAMIC_TILES=1
      ab_run_side "old r$round" old 120 benchmarks/experiments/grouped_rows.py "${shapes[@]}"
    done
    ;;
  moe)
    layers=(dsv3_up_4k dsv3_down_4k dsv3_up_16k qwen235_up qwen235_down qwen30_up qwen30_down gptoss_up gptoss_down)
    for round in 1 2; do
      for side in new old; do
        ab_run_side "$side r$round" "$side" 150 benchmarks/experiments/moe_models.py "$side" --ragged-only --masked \
          "${layers[@]}" dsv3_up_dec dsv3_down_dec qwen30_up_dec mixtral_up_dec gptoss_up_dec
      done
    done
    ;;
  tests)
    ab_side_tests new "ragged or masked" 14 "${JDG_WHOLE_TEST_LIMIT:-220}" tests/test_gpu_grouped.py \
      tests/test_gpu_configs.py
    AB_TESTS_NAME=dyn_configs ab_side_tests new dynamic 6 120 tests/test_gpu_configs.py
    ;;
  sanitize)
    ab_sanitize "(ragged or masked) and (not configs or bm256-x1 or bm256-x2 or bm128-x2 or dynamic or tail_split)"
    ;;
esac
ab_use new
ab_pack
echo "done in $((SECONDS - start)) s"
