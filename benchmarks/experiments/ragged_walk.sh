#!/usr/bin/env bash
# The ragged and masked tile walk reading group sizes 32 at a time (fp8_gemm_tiles.cuh, seek_group) against one
# dependent load per group crossed (the headers at OLD, default c24a858), same build, same run. Stages, one device
# call each (10 minutes):
#   bash benchmarks/experiments/ragged_walk.sh tests   test_gpu_grouped.py with the new walk, then moe_models.py's
#                                                      small-group layers and masked decode layers, one round per side
#   bash benchmarks/experiments/ragged_walk.sh rows    test_gpu_configs.py's walks in windows (every configuration
#                                                      kind), a second round of the layers, then grouped_rows.py's
#                                                      contiguous (with ragged) and masked table rows, one round each
#   bash benchmarks/experiments/ragged_walk.sh masked  grouped_rows.py's masked table rows, three rounds per side
#   bash benchmarks/experiments/ragged_walk.sh first   the tree against one group crossed by a plain load before the
#                                                      windows (ragged_walk_one_group_first.patch) and old, on the
#                                                      layers that moved most (Qwen3-235B down, Qwen3-30B up, its decode)
#   bash benchmarks/experiments/ragged_walk.sh variants  four sides on the layers that moved: the tree's walk (new:
#                                                      the rows' running sums, then the tiles'), the two sums side by
#                                                      side (ragged_walk_sums_side_by_side.patch; it ran as the tree,
#                                                      and the tree's walk as a patch), the consumers walking one group
#                                                      at a time and only the producer by windows
#                                                      (ragged_walk_consumers_sequential.patch), and old
# The patches apply to f7ad7da's headers, where these stages ran (the tree since has ragged_walk_one_group_first.patch,
# and `first` no longer applies). Contiguous rows do not walk groups: controls. Predicted before the first run, from the groups a CTA crosses per tile
# at ~300-500 cycles each: ragged Qwen3-30B up / down (128 groups, ~6-8 crossed) 5-12% faster, DeepSeek-V3 at 4k
# tokens 1-3%, gpt-oss 1-2%, Mixtral none; masked decode Qwen3-30B (128 groups of 12 tiles) ~10%, DeepSeek-V3 1-4%,
# the table's rows (4-8 groups) under 1%.
. "$(dirname "$0")/ab_headers.sh"
stage=${1:-tests}
OLD=${OLD:-c24a858}
ab_setup
ab_prepare_from "$OLD"
LAYERS=(qwen30_up qwen30_down dsv3_up_4k dsv3_down_4k gptoss_up gptoss_down mixtral_down
        dsv3_up_dec dsv3_down_dec qwen30_up_dec mixtral_up_dec gptoss_up_dec --masked)
case $stage in
  tests)
    ab_use new
    JDG_TEST_LIMIT=300 ab_tests grouped_new tests/test_gpu_grouped.py
    ab_rows 1 "" 280 moe_models.py round1 "${LAYERS[@]}" | tee -a "$OUT/moe_rows.txt"
    ;;
  rows)
    ab_use new
    JDG_TEST_LIMIT=200 ab_tests configs_new tests/test_gpu_configs.py -k walked_in_windows
    ab_rows 1 "" 280 moe_models.py round2 "${LAYERS[@]}" | tee -a "$OUT/moe_rows.txt"
    ab_rows 1 1 200 grouped_rows.py contiguous masked | tee -a "$OUT/table_rows.txt"
    ;;
  masked)
    ab_rows 3 1 150 grouped_rows.py masked | tee -a "$OUT/masked_rows.txt"
    ;;
  first)
    ab_use new && git apply benchmarks/experiments/ragged_walk_one_group_first.patch && rm -rf /tmp/ab_first_cuda &&
      cp -r cuda /tmp/ab_first_cuda || exit 1
    ab_use new
    AB_SIDES="new first old" ab_rows 1 "" 150 moe_models.py first qwen235_down qwen30_up qwen30_up_dec --masked |
      grep -v contiguous | tee -a "$OUT/first.txt"
    ;;
  variants)
    side_patched() {  # name, patch: the tree's headers with the patch
      ab_use new && git apply "benchmarks/experiments/$2" && rm -rf "/tmp/ab_$1_cuda" && cp -r cuda "/tmp/ab_$1_cuda"
      ab_use new
    }
    side_patched sums ragged_walk_sums_side_by_side.patch && side_patched seq ragged_walk_consumers_sequential.patch ||
      exit 1
    AB_SIDES="sums new seq old" ab_rows 1 "" 280 moe_models.py variants qwen30_up qwen30_down dsv3_down_4k \
      gptoss_down dsv3_up_dec dsv3_down_dec qwen30_up_dec gptoss_up_dec --masked | tee -a "$OUT/variants.txt"
    ;;
  *) echo "unknown stage $stage"; exit 2 ;;
esac
echo "done in $((SECONDS - start)) s"
