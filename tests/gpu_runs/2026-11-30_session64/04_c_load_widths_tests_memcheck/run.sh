# Session 64 call 4: the C loads' widths (HEAD, side new) against e8808fe (side old, .ab_old): rows; then with HEAD's
# headers the store-width, dense, differentiable and k-grouped GPU tests, and memcheck of the k-grouped and
# store-width cases.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup; cp .run4.sh "$OUT/run.sh"
ab_prepare_from .ab_old/cuda
ab_dense 2 c=f32 4096,7170,2048 4096,7168,2048 | tee "$OUT/rows.txt"
ab_dense 2 c=bf16 4096,7170,2048 4096,7168,2048 | tee -a "$OUT/rows.txt"
echo "rows done $((SECONDS - start)) s"
ab_use new
{ python -I -m pytest tests/test_gpu_configs.py -k "store_widths or k_grouped" --collect-only -q -p no:cacheprovider
  python -I -m pytest tests/test_gpu_grouped.py -k k_grouped --collect-only -q -p no:cacheprovider
  python -I -m pytest tests/test_gpu_dense.py -k "1540 or odd or options or sweep or rounded" --collect-only -q \
    -p no:cacheprovider
  python -I -m pytest tests/test_differentiable.py --collect-only -q -p no:cacheprovider; } 2>/dev/null |
  grep "::" >/tmp/t_ids.txt
wc -l </tmp/t_ids.txt
rm -f /tmp/t_ids_*; split -n r/6 -d /tmp/t_ids.txt /tmp/t_ids_
for part in /tmp/t_ids_0*; do
  DG_JIT_CACHE_DIR=/tmp/ab_cache_new JDG_TEST_LIMIT=220 ab_tests "t_${part##*_}" $(cat "$part") &
done; wait
echo "tests done $((SECONDS - start)) s"
JDG_SANITIZE_FILES="tests/test_gpu_grouped.py tests/test_gpu_configs.py" JDG_SANITIZE_K="k_grouped or store_widths" \
  JDG_SANITIZE_LIMIT=$((575 - (SECONDS - start))) bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -3
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls tests_*.log) && rm -f "$OUT"/tests_*.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
