#!/usr/bin/env bash
# The tile queue's leader publishes the cluster's next tile after the tile's first copies, not before its expert ids
# and copies (publish_after_copies.patch): the counter's atomic round trip then overlaps the first stage's loads.
# Why: with the same 4 x 8192-row tiles (contiguous_straddle.sh, session 92), contiguous and ragged are level
# static (ragged / contiguous 0.990 at 7168 x 2048, 0.983-0.988 at 4096 x 7168), but with dynamic tiles ragged gains
# 3% and contiguous loses 1.6% (0.945 / 0.965). What dynamic tiles add to contiguous alone: the producer's tile switch
# holds two serial round trips (the counter, then the tile's ids) before its first copy, with 3 stages ahead.
# Compiled (NVRTC 13, sm_90a): only the dynamic kernels change (the producer); static ones identical. Loading the ids
# before publishing instead compiles to the same SASS (ptxas already overlaps them), so it is not a side here.
# Prediction: contiguous with dynamic tiles 1-4% faster, ragged and k-grouped 0-1%.
# One device call (~6 min): sides new (the patch) / old (as sent), two rounds of contiguous_straddle.py on 4 x 8192
# rows with dynamic tiles forced, one round of grouped_rows.py's contiguous rows with dynamic tiles forced (dt) and of
# its k-grouped rows (defaults: dynamic), and old's static contiguous rows for reference.
# Correctness is not checked here: before taking it, the GPU tests of the dynamic-tile kernels.
. "$(dirname "$0")/ab_headers.sh"
ab_patch_vs_head benchmarks/experiments/publish_after_copies.patch
run_side() {  # side, time limit, script and arguments, then DG_TUNE_* settings after "--"
  local side=$1 limit=$2 args=() ; shift 2
  while [ "$1" != -- ]; do args+=("$1"); shift; done; shift
  ab_use "$side"
  env "$@" DG_JIT_CACHE_DIR="/tmp/ab_cache_$side" timeout -k 5 "$limit" python "${args[@]}" 2>&1 |
    grep -E " us|rror" | sed "s/^/$side${TAG:+ $TAG} /" | tee -a "$OUT/rows.txt"
}
x=benchmarks/experiments
for round in 1 2; do for side in new old; do
  for nk in "7168 2048" "4096 7168"; do
    # shellcheck disable=SC2086  # N and K are two words
    TAG="dt r$round" run_side $side 100 $x/contiguous_straddle.py $nk 8192,8192,8192,8192 -- DG_TUNE_DYNAMIC_TILES=1
  done
done; done
for side in new old; do
  TAG=dt run_side $side 150 $x/grouped_rows.py contiguous -- DG_TUNE_DYNAMIC_TILES=1
  TAG=kg run_side $side 150 $x/grouped_rows.py k_grouped --
done
TAG=static run_side old 150 $x/grouped_rows.py contiguous --
ab_use new
echo "done in $((SECONDS - start)) s"
