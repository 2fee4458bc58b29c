# Session 64 call 2: the register stores' widths (working tree, side new) against HEAD 9cd9b59 (side old, .ab_old):
# tests, rows, memcheck of the store-width cases; then c_lines.patch on top (side cl) against new: k-grouped rows.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup; cp .run2.sh "$OUT/run.sh"
ab_sent; ab_side cl benchmarks/experiments/c_lines.patch
rm -rf /tmp/ab_new_cuda && cp -r /tmp/ab_old_cuda /tmp/ab_new_cuda
rm -rf /tmp/ab_old_cuda && cp -r .ab_old/cuda /tmp/ab_old_cuda
diff -r /tmp/ab_old_cuda /tmp/ab_new_cuda >"$OUT/ab_change.diff"
ab_use new
{ python -I -m pytest tests/test_gpu_configs.py -k store_widths --collect-only -q -p no:cacheprovider
  python -I -m pytest tests/test_gpu_dense.py -k "1540 or odd or options or sweep or rounded" --collect-only -q \
    -p no:cacheprovider; } 2>/dev/null | grep "::" >/tmp/w_ids.txt
rm -f /tmp/w_ids_*; split -n r/4 -d /tmp/w_ids.txt /tmp/w_ids_
for part in /tmp/w_ids_0*; do
  DG_JIT_CACHE_DIR=/tmp/ab_cache_new JDG_TEST_LIMIT=200 ab_tests "widths_${part##*_}" $(cat "$part") &
done; wait
echo "tests done $((SECONDS - start)) s"
ab_dense 2 4096,7170,2048 4096,7169,2048 4096,7172,2048 | tee "$OUT/width_rows.txt"
ab_dense 2 c=f32 4096,7170,2048 4096,7168,2048 | tee -a "$OUT/width_rows.txt"
echo "width rows done $((SECONDS - start)) s"
AB_SIDES="cl new" AB_ROUNDS=2 ab_grouped k_grouped=4,4096,4096,8192 k_grouped=4,4096,7168,8192 \
  k_grouped=4,7168,7168,8192 k_grouped=4,4096,2048,8192 k_grouped_no_c=16,7168,4096,1024 | tee "$OUT/c_lines_rows.txt"
AB_SIDES="cl new" ab_dense 2 c=f32 4096,7168,2048 | tee -a "$OUT/c_lines_rows.txt"
echo "c_lines rows done $((SECONDS - start)) s"
ab_use new
JDG_SANITIZE_FILES="tests/test_gpu_configs.py" JDG_SANITIZE_K="store_widths" JDG_SANITIZE_LIMIT=$((570 - (SECONDS - start))) \
  bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -3
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls tests_*.log) && rm -f "$OUT"/tests_*.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
