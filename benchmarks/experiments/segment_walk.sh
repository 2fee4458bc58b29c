#!/usr/bin/env bash
# The contiguous segments' walk reading 32 blocks' keys at a time (fp8_gemm_tiles.cuh, seek_segment) against one
# round trip per segment crossed (group_rows: the headers at OLD, default e463428), same build, same run. Why: on
# session 50's grid (NOTES 89) ragged 256-row tiles ran 4-7% faster than contiguous 128 x 192 ones on groups of
# 384-1024 rows at K >= 4096, where contiguous 256-row segment tiles had run ~7% slower than those 128 x 192 ones in
# 87: the same tile counts, but the segment walk crosses ~4 segments per tile, each a round trip. Stages, one call each:
#   bash benchmarks/experiments/segment_walk.sh tests   test_gpu_grouped.py -k contiguous and test_gpu_configs.py's
#                                                       forced segments (alone, in clusters) with the new walk, then
#                                                       small-group layers in forced 256-row segment tiles, one round
#   bash benchmarks/experiments/segment_walk.sh rows    a second round of them, then the layers whose default is a
#                                                       segment walk: the table's contiguous rows (grouped_rows.py),
#                                                       DeepSeek-V3 up at 16k tokens, Mixtral down
# Predicted (before the first run): forced 256-row segment tiles on groups of ~384-512 rows 5-10% faster (the gap to
# ragged's same tiles), on 1024-row groups 1-3%; the table's rows (4-8 groups, ~1 segment crossed per tile) within
# the K loops' schedule effect (their SASS moved: NOTES 51), +-2%.
. "$(dirname "$0")/ab_headers.sh"
stage=${1:-tests}
OLD=${OLD:-e463428}
ab_setup
ab_prepare_from "$OLD"
SMALL=(r384n2048k4096=32,12288,2048,4096 r512n3072k4096=24,12288,3072,4096 r512n7168k4096=24,12288,7168,4096
       r384n2048k5120=32,12288,2048,5120 r1024n2048k4096=12,12288,2048,4096 qwen235_up --contiguous-only)
small_rows() {  # round
  export DG_TUNE_BLOCK_M=256
  ab_rows 1 "" 150 moe_models.py "bm256seg$1" "${SMALL[@]}" | tee -a "$OUT/small_rows.txt"
  unset DG_TUNE_BLOCK_M
}
case $stage in
  tests)
    ab_use new
    ab_tests grouped_contiguous_new tests/test_gpu_grouped.py -k contiguous
    ab_tests configs_segments_new tests/test_gpu_configs.py -k contiguous_segments
    small_rows 1
    ;;
  rows)
    small_rows 2
    AB_ROUNDS=2 ab_grouped contiguous | tee -a "$OUT/table_rows.txt"
    ab_rows 2 1 200 moe_models.py default dsv3_up_16k mixtral_down --contiguous-only | tee -a "$OUT/model_rows.txt"
    ;;
  *) echo "unknown stage $stage"; exit 2 ;;
esac
echo "done in $((SECONDS - start)) s"
