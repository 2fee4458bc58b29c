#!/usr/bin/env bash
# The epilogue deferred into the next tile's first K block (NOTES 31): deferred_epilogue.patch applied to the working
# tree's kernel headers, same-run A/B against HEAD's (or AB_OLD_DIR's; the host side is the same), kernel time only,
# dense rows alternating over two rounds and the grouped rows once each; then the GPU tests of the paths it touches
# (256-row tiles of every mode, the TMA store) with the patch, in parallel. One device call; logs under $OUT.
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
git apply benchmarks/experiments/deferred_epilogue.patch || exit 1
ab_prepare "${AB_OLD_DIR:-}"
dense="4096,32768,512 4096,24576,1536 4096,7168,2048 2048,7168,2048 4096,7168,16384 4096,4096,7168 4096,2112,7168"
dense+=" 4096,7000,7000 256,7168,2048"
# shellcheck disable=SC2086  # the shapes are words
ab_dense 2 $dense | tee "$OUT/ab_dense.txt"
ab_grouped contiguous masked k_grouped | tee "$OUT/ab_grouped.txt"
echo "after A/B: $((SECONDS - start)) s" | tee -a "$OUT/machine.txt"
left=$((580 - (SECONDS - start)))
[ $left -gt 60 ] || exit 0
part() {
  local name=$1; shift
  timeout -k 5 $left python -I -m pytest "$@" -q -rs -p no:cacheprovider 2>&1 | grep -v -E "^E[0-9]{4} |^$" \
    >"$OUT/tests_$name.log"
  echo "$name: $(grep -E "passed|failed" "$OUT/tests_$name.log" | tail -1)"
  grep -E "^FAILED|^ERROR" "$OUT/tests_$name.log" | head -5
}
export DG_JIT_CACHE_DIR=/tmp/tests_cache
part dense tests/test_gpu_dense.py &
part grouped tests/test_gpu_grouped.py &
part configs_256 tests/test_gpu_configs.py -k "not tma_store and bm256" &
part tma_store tests/test_gpu_configs.py -k "tma_store" &
wait
