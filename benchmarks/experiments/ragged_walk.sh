#!/usr/bin/env bash
# The ragged and masked tile walk reading group sizes 32 at a time (fp8_gemm_tiles.cuh, seek_group) against one
# dependent load per group crossed (the headers at OLD, default c24a858), same build, same run. Stages, one device
# call each (10 minutes):
#   bash benchmarks/experiments/ragged_walk.sh tests   test_gpu_grouped.py with the new walk, then moe_models.py's
#                                                      small-group layers and masked decode layers, one round per side
#   bash benchmarks/experiments/ragged_walk.sh rows    a second round of those, then grouped_rows.py's contiguous
#                                                      (with ragged) and masked table rows, one round per side
# Contiguous rows do not walk groups: controls. Predicted before the first run, from the groups a CTA crosses per tile
# at ~300-500 cycles each: ragged Qwen3-30B up / down (128 groups, ~6-8 crossed) 5-12% faster, DeepSeek-V3 at 4k
# tokens 1-3%, gpt-oss 1-2%, Mixtral none; masked decode Qwen3-30B (128 groups of 12 tiles) ~10%, DeepSeek-V3 1-4%,
# the table's rows (4-8 groups) under 1%.
. "$(dirname "$0")/ab_headers.sh"
stage=${1:-tests}
OLD=${OLD:-c24a858}
ab_setup
rm -rf /tmp/walk_old && mkdir -p /tmp/walk_old && git archive "$OLD" cuda | tar -x -C /tmp/walk_old
[ -d /tmp/walk_old/cuda ] || { echo "no headers at $OLD"; exit 1; }
ab_prepare /tmp/walk_old/cuda
LAYERS=(qwen30_up qwen30_down dsv3_up_4k dsv3_down_4k gptoss_up gptoss_down mixtral_down
        dsv3_up_dec dsv3_down_dec qwen30_up_dec mixtral_up_dec gptoss_up_dec --masked)
case $stage in
  tests)
    ab_use new
    JDG_TEST_LIMIT=300 ab_tests grouped_new tests/test_gpu_grouped.py
    ab_rows 1 "" 280 moe_models.py round1 "${LAYERS[@]}" | tee -a "$OUT/moe_rows.txt"
    ;;
  rows)
    ab_rows 1 "" 280 moe_models.py round2 "${LAYERS[@]}" | tee -a "$OUT/moe_rows.txt"
    ab_rows 1 1 200 grouped_rows.py contiguous masked | tee -a "$OUT/table_rows.txt"
    ;;
  *) echo "unknown stage $stage"; exit 2 ;;
esac
echo "done in $((SECONDS - start)) s"
