#!/usr/bin/env bash
# The epilogue deferred into the next tile's first K block (NOTES 31): same-run A/B of the working tree's kernel
# headers against HEAD's (AB_BASE to name another revision; the host side is the same), kernel time only, dense rows
# alternating over two rounds and the grouped rows once each; then the GPU tests of the paths it touches (256-row
# tiles of every mode, the TMA store), in parallel. One device call; logs under $OUT.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
start=$SECONDS
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git rev-parse HEAD; } | tee "$OUT/machine.txt"
# The base kernel headers: AB_OLD_DIR (a copy sent along: the device copy's git history may lag), else HEAD's.
rm -rf /tmp/ab_new_cuda /tmp/ab_old_cuda && cp -r cuda /tmp/ab_new_cuda
if [ -n "${AB_OLD_DIR:-}" ]; then cp -r "$AB_OLD_DIR" /tmp/ab_old_cuda; else git checkout -q HEAD -- cuda && cp -r cuda /tmp/ab_old_cuda; fi
diff -r /tmp/ab_old_cuda /tmp/ab_new_cuda >"$OUT/ab_change.diff"
dense="4096,32768,512 4096,24576,1536 4096,7168,2048 2048,7168,2048 4096,7168,16384 4096,4096,7168 4096,2112,7168"
dense+=" 4096,7000,7000 256,7168,2048"
for round in 1 2; do for v in new old; do
  rm -rf cuda && cp -r /tmp/ab_${v}_cuda cuda
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 100 python benchmarks/experiments/dense_rows.py $dense 2>&1 |
    grep -E " us |rror" | sed "s/^/$v r$round /"
done; done | tee "$OUT/ab_dense.txt"
for v in new old; do
  rm -rf cuda && cp -r /tmp/ab_${v}_cuda cuda
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 110 python benchmarks/experiments/grouped_rows.py contiguous masked \
    k_grouped 2>&1 | grep -E " us |rror" | sed "s/^/$v /"
done | tee "$OUT/ab_grouped.txt"
rm -rf cuda && cp -r /tmp/ab_new_cuda cuda
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
