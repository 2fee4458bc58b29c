# Session 69 call 6 (tree's kernels = ba847c8's): the other GPU test files in 10 processes.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup; cp .run3.sh "$OUT/run.sh"
export DG_JIT_CACHE_DIR=/tmp/jdg69
python -I -m pytest tests/test_gpu_grouped.py tests/test_differentiable.py tests/test_gpu_dense.py tests/test_export.py \
  tests/test_threads.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" >"$OUT/ids.txt"
wc -l <"$OUT/ids.txt"
ab_split_tests f "$OUT/ids.txt" 10 $((500 - (SECONDS - start)))
echo "tests done $((SECONDS - start)) s"
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log 2>/dev/null) && rm -f "$OUT"/*.log
echo "done $SECONDS s"
