#!/usr/bin/env bash
# Contiguous 256-row tiles walking expert segments (heuristics.cc step 11, benchmarks/NOTES.md 63, 64): the GPU tests
# that take them (every contiguous case forced onto the walk in clusters of 1 and 2, the grouped file, whose
# long_k_segments case takes it by default, the configuration tests' other contiguous cases), then the benchmark's
# contiguous rows and two K = 4096 ones with DG_TUNE_SEGMENTS=0 / 1 (one build), in two rounds.
#     bash benchmarks/experiments/contiguous_segments.sh     (one device call, ~7 min)
# PATCH=<file>: the same with that patch applied first (and taken back at the end), e.g. NOTES 65's
# segments_store_only.patch (now in the tree).
. "$(dirname "$0")/prelude.sh"
if [ -n "${PATCH:-}" ]; then
  git apply "$PATCH" || exit 1
  trap 'git apply -R "$PATCH"' EXIT
fi
build
part() {  # name, pytest arguments
  local name=$1; shift
  timeout -k 5 330 python -I -m pytest "$@" -q -rs -p no:cacheprovider 2>&1 | grep -v -E "^[IWE][0-9]{4} " \
    >"$OUT/tests_$name.log"
  echo "$name: $(grep -E "passed|failed" "$OUT/tests_$name.log" | tail -1)"
}
part segments tests/test_gpu_configs.py -k "contiguous_segments" &
part configs tests/test_gpu_configs.py -k "contiguous and not contiguous_segments" &
part grouped tests/test_gpu_grouped.py &
wait
grep -E "^FAILED" "$OUT"/tests_*.log | head -10
for round in 1 2; do
  for segments in 0 1; do
    echo "# round $round, DG_TUNE_SEGMENTS=$segments"
    DG_TUNE_SEGMENTS=$segments timeout -k 5 150 python benchmarks/experiments/grouped_rows.py contiguous \
      contiguous=4,8192,4096,4096 contiguous=8,4096,7168,4096 2>&1 | grep grouped
  done
done | tee "$OUT/contiguous_segments_times.txt"
