# Session 67 call 3: benchmarks/experiments/c_shifted_loads.sh (A/B, leaves the faster side in cuda/), then with those
# headers test_gpu_grouped.py, test_differentiable.py, test_gpu_dense.py, test_export.py, test_threads.py in 10
# processes, then memcheck of the store and C cases.
set -uo pipefail
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
cp .run3.sh "$OUT/run.sh"
source benchmarks/experiments/c_shifted_loads.sh
export DG_JIT_CACHE_DIR=/tmp/jdg67_$side
python -I -m pytest tests/test_gpu_grouped.py tests/test_differentiable.py tests/test_gpu_dense.py tests/test_export.py \
  tests/test_threads.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" >"$OUT/ids.txt"
wc -l <"$OUT/ids.txt"
ab_split_tests s "$OUT/ids.txt" 10 $((480 - (SECONDS - start)))
echo "tests done $((SECONDS - start)) s"
JDG_SANITIZE_FILES="tests/test_gpu_configs.py tests/test_gpu_grouped.py tests/test_gpu_dense.py" \
  JDG_SANITIZE_K="shifted or store_widths or odd_n or test_dense_options" \
  JDG_SANITIZE_LIMIT=$((575 - (SECONDS - start))) bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -4
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log 2>/dev/null) && rm -f "$OUT"/*.log
echo "done $SECONDS s"
