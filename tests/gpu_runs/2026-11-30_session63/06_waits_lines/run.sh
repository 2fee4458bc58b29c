# Session 63 call 6: where the k-grouped f32 line stores' time goes at N = 2048 (DG_PROFILE_WAITS): sides old (the
# tree: 8 rows x 64 bytes at N = 2048), l4 (lane ^ 4 lines at every N), l16 (lane ^ 16 lines at every N); rows with C.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup; ab_sent
ab_side l4 .l4all.patch; ab_side l16 benchmarks/experiments/kgrouped_f32_lines16.patch
cp .run6.sh "$OUT/run.sh"
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=10
for round in 1 2; do for side in old l4 l16; do
  ab_use $side
  for shape in 4,4096,2048,8192 4,4096,4096,8192; do
    echo "## $side r$round k_grouped $shape"
    DG_JIT_CACHE_DIR=/tmp/ab_cache_$side timeout -k 5 60 python tools/profile_one.py k_grouped $shape 2>&1 | grep -v "^I[0-9]" | grep -v "^E[0-9]"
  done
done; done >"$OUT/waits.log"
python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
gzip "$OUT/waits.log"; rm -f $OUT/build.log; echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
