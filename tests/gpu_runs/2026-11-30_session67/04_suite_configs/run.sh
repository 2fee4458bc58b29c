# Session 67 call 4 (tree 4cac816's kernels): all of test_gpu_configs.py in 14 processes.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup; cp .run4.sh "$OUT/run.sh"
export DG_JIT_CACHE_DIR=/tmp/jdg67
python -I -m pytest tests/test_gpu_configs.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" >"$OUT/ids.txt"
wc -l <"$OUT/ids.txt"
ab_split_tests c "$OUT/ids.txt" 14 $((500 - (SECONDS - start)))
echo "tests done $((SECONDS - start)) s"
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log 2>/dev/null) && rm -f "$OUT"/*.log
echo "done $SECONDS s"
