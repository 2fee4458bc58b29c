#!/usr/bin/env bash
# Contiguous tiles published whole (contiguous_whole_tiles.patch): the tile ids' warp, now the producer warpgroup's
# third, is the only one that walks the tiles (with dynamic tiles taking each index itself, without a queue warp); it
# publishes each tile's variable fields with its expert ids, and the producer warp and the consumers take them from
# shared memory instead of running the scheduler (the segment walk's key loads) themselves (NOTES 142, 143).
# The patch goes on the device copy before the build; side old is the headers as sent. Compiled with NVRTC 13.5: the
# other modes' kernels are HEAD's exact SASS; contiguous static and dynamic kernels R2UR 36 / 37 (HEAD 30 / 31,
# 142's dynamic patch 133), 2 LDL/STL (HEAD 33 / 20), the first K loop 421 instructions (HEAD 420 / 421).
# Predicted against old (static): new static -0.3% to -1% (no scheduler on the readers' path), new with dynamic tiles
# (dyn) -1% to -3% (ragged's gain from dynamic tiles, NOTES 138); ragged level on every side (the control).
#   bash benchmarks/experiments/contiguous_whole_tiles.sh rows    two rounds of the sides' rows (~5 min)
#   bash benchmarks/experiments/contiguous_whole_tiles.sh tests   side new's contiguous GPU cases as the heuristics
#                                                                  pick (14 processes of 220 s), then static and the
#                                                                  dynamic-tile cases (~8 min)
#   bash benchmarks/experiments/contiguous_whole_tiles.sh sanitize   racecheck and memcheck of side new's contiguous
#                                                                  cases (session 97's 40) and its dynamic ones (~7 min)
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_patched benchmarks/experiments/contiguous_whole_tiles.patch
ab_reversed benchmarks/experiments/contiguous_whole_tiles.patch
ab_use new
case "${1:-rows}" in
  rows)
    shapes=(contiguous contiguous=16,1024,4096,2048 contiguous=32,512,7168,2048 contiguous=8,2048,4096,7168)
    for round in 1 2; do
      ab_run_side "new r$round" new 100 benchmarks/experiments/grouped_rows.py "${shapes[@]}"
      ab_run_side "dyn r$round" new 100 benchmarks/experiments/grouped_rows.py "${shapes[@]}" -- \
        DG_TUNE_DYNAMIC_TILES=1 DG_TUNE_TAIL_SPLIT=0
      ab_run_side "old r$round" old 100 benchmarks/experiments/grouped_rows.py "${shapes[@]}"
    done
    ;;
  tests)
    # Contiguous GEMMs take dynamic tiles by default since the patch landed (heuristics.cc step 18, NOTES 144): the
    # grouped and configs files' contiguous cases as the heuristics pick (14 processes of 220 s), the grouped file's
    # with the static order forced, and the configs' dynamic-tile cases (every mode, alone and in clusters of 2)
    ab_side_tests new contiguous 14 "${JDG_WHOLE_TEST_LIMIT:-220}" tests/test_gpu_grouped.py tests/test_gpu_configs.py
    DG_TUNE_DYNAMIC_TILES=0 AB_TESTS_NAME=static ab_side_tests new contiguous 8 120 tests/test_gpu_grouped.py
    AB_TESTS_NAME=dyn_configs ab_side_tests new dynamic 6 120 tests/test_gpu_configs.py
    ;;
  sanitize)
    ab_sanitize "contiguous and (not configs or bm256-x1 or bm256-x2 or bm128-x2 or bm64-x1-pipe-paired or dynamic)"
    ;;
esac
ab_use new
ab_pack
echo "done in $((SECONDS - start)) s"
