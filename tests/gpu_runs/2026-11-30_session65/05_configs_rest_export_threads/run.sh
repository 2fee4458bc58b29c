# Session 65 call 5 (tree 56239ad): the test_gpu_configs.py cases session 64 did not run on its kernels (split K, split
# halves, tail split, TMA store, multicast B, c prefetch, scans: .ids5.txt) in 8 processes, test_export.py and
# test_threads.py in a ninth; then memcheck of the odd-N store cases.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup; cp .run5.sh "$OUT/run.sh"; cp .ids5.txt "$OUT/ids.txt"
export DG_JIT_CACHE_DIR=/tmp/jdg65
rm -f /tmp/t_ids_*; split -n r/8 -d .ids5.txt /tmp/t_ids_
for part in /tmp/t_ids_0*; do JDG_TEST_LIMIT=$((400 - (SECONDS - start))) ab_tests "c_${part##*_}" $(cat "$part") & done
JDG_TEST_LIMIT=$((400 - (SECONDS - start))) ab_tests export_threads tests/test_export.py tests/test_threads.py &
wait
echo "tests done $((SECONDS - start)) s"
JDG_SANITIZE_FILES="tests/test_gpu_configs.py" JDG_SANITIZE_K="shifted or 1537" \
  JDG_SANITIZE_LIMIT=$((520 - (SECONDS - start))) bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -4
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log) && rm -f "$OUT"/*.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
