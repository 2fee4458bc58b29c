#!/usr/bin/env bash
# The tile queue taken by a warp of its own (queue_warp.patch): the second warp of the producer warpgroup in the
# cluster's CTA 0 takes each next tile from the counter and publishes it, instead of the producer warp as it starts a
# tile. Why: the producer's tile switch is on the critical path with 3 stages (publish_after_copies.sh: one counter
# round trip after a tile's first copy cost ragged 5%); there, contiguous holds two serial round trips (the tile's
# expert ids, then the counter; compiled, ptxas consumes the ids before the counter's branch whatever the source
# order) where ragged holds one. Contiguous loses 1.6% with dynamic tiles where ragged gains 3% (contiguous_straddle).
# Sides: new (the patch: one slot, the queue warp takes tile i + 1 once the readers took tile i, as the cluster starts
# tile i), new2 (two slots: one tile further ahead), old (as sent). Compiled (NVRTC 13, sm_90a): static kernels
# identical; the dynamic ones change (the contiguous segment walk's spills 80/116/92 -> 80/128/96 bytes).
# Prediction: contiguous with dynamic tiles 2-5% faster (level with ragged on 4 x 8192), ragged and k-grouped 0-1%.
# One device call (~6 min): two rounds of contiguous_straddle.py on 4 x 8192 rows with dynamic tiles forced, one round
# of grouped_rows.py's contiguous rows with dynamic tiles forced and of its k-grouped rows (defaults: dynamic); then
# side new's dynamic-tiles GPU tests (test_gpu_configs.py -k dynamic).
. "$(dirname "$0")/ab_headers.sh"
ab_patch_vs_head benchmarks/experiments/queue_warp.patch
rm -rf /tmp/ab_new2_cuda && cp -r /tmp/ab_new_cuda /tmp/ab_new2_cuda
sed -i 's/^constexpr int kTileSlots = 1;/constexpr int kTileSlots = 2;/' /tmp/ab_new2_cuda/jax_deepgemm/fp8_gemm_config.cuh
grep -c "kTileSlots = 2" /tmp/ab_new2_cuda/jax_deepgemm/fp8_gemm_config.cuh
run_side() {  # side, time limit, script and arguments, then DG_TUNE_* settings after "--"
  local side=$1 limit=$2 args=(); shift 2
  while [ "$1" != -- ]; do args+=("$1"); shift; done; shift
  ab_use "$side"
  env "$@" DG_JIT_CACHE_DIR="/tmp/ab_cache_$side" timeout -k 5 "$limit" python "${args[@]}" 2>&1 |
    grep -E " us|rror" | sed "s/^/$side${TAG:+ $TAG} /" | tee -a "$OUT/rows.txt"
}
x=benchmarks/experiments
for round in 1 2; do for side in new new2 old; do
  for nk in "7168 2048" "4096 7168"; do
    # shellcheck disable=SC2086  # N and K are two words
    TAG="dt r$round" run_side $side 100 $x/contiguous_straddle.py $nk 8192,8192,8192,8192 -- DG_TUNE_DYNAMIC_TILES=1
  done
done; done
for side in new new2 old; do
  TAG=dt run_side $side 150 $x/grouped_rows.py contiguous -- DG_TUNE_DYNAMIC_TILES=1
  TAG=kg run_side $side 150 $x/grouped_rows.py k_grouped --
done
ab_side_tests new dynamic 4 150 tests/test_gpu_configs.py
ab_use new
echo "done in $((SECONDS - start)) s"
