#!/usr/bin/env bash
# Contiguous 256-row tiles walking expert segments (benchmarks/NOTES.md 63): the contiguous GPU tests (every case with
# 256-row tiles in clusters of 1 and 2, the grouped file's contiguous cases, the configuration tests' contiguous
# ones), then the contiguous kernel against the ragged one on the same tokens and the table's contiguous rows, in
# two rounds.     bash benchmarks/experiments/contiguous_segments.sh     (one device call, ~8 min)
# contiguous_segments.patch (87252b4's kernel change and tests, measured and not taken, then its segment scan batched:
# one memory round trip per 128 blocks; prepared, not run) is applied, then taken back; it applies to the kernel of
# d1621b8 (the commit before 87252b4), which its revert restored.
. "$(dirname "$0")/prelude.sh"
git apply benchmarks/experiments/contiguous_segments.patch || exit 1
trap 'git apply -R benchmarks/experiments/contiguous_segments.patch' EXIT
build
part() {  # name, pytest arguments
  local name=$1; shift
  timeout -k 5 330 python -I -m pytest "$@" -q -rs -p no:cacheprovider 2>&1 | grep -v -E "^[IWE][0-9]{4} " \
    >"$OUT/tests_$name.log"
  echo "$name: $(grep -E "passed|failed" "$OUT/tests_$name.log" | tail -1)"
}
part segments tests/test_gpu_configs.py -k "contiguous_segments" &
part configs tests/test_gpu_configs.py -k "contiguous and not contiguous_segments" &
part grouped tests/test_gpu_grouped.py -k "contiguous or scan" &
wait
grep -E "^FAILED" "$OUT"/tests_*.log | head -10
for round in 1 2; do
  echo "# round $round"
  timeout -k 5 120 python benchmarks/experiments/contiguous_vs_ragged.py 4096,7168 8865,7060,5935,5815 \
    8960,7168,5888,5888 2>&1 | grep sizes
  timeout -k 5 80 python benchmarks/experiments/contiguous_vs_ragged.py 7168,2048 9731,10220,8716,9320 \
    9728,10240,8704,9216 2>&1 | grep sizes
  timeout -k 5 100 python benchmarks/experiments/grouped_rows.py contiguous 2>&1 | grep grouped
done | tee "$OUT/contiguous_segments_times.txt"
