# Session 64 call 3: sides old (9cd9b59, .ab_old), new (99182be: the store widths), cl (new + c_lines.patch), cl2
# (new + c_lines_wave.patch: without C the line exchange per wave before its stores). Rows, then the k-grouped tests
# with cl2's headers.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup; cp .run3.sh "$OUT/run.sh"
ab_sent; ab_side cl benchmarks/experiments/c_lines.patch; ab_side cl2 benchmarks/experiments/c_lines_wave.patch
rm -rf /tmp/ab_new_cuda && cp -r /tmp/ab_old_cuda /tmp/ab_new_cuda
rm -rf /tmp/ab_old_cuda && cp -r .ab_old/cuda /tmp/ab_old_cuda
diff -r /tmp/ab_old_cuda /tmp/ab_new_cuda >"$OUT/ab_change.diff"
AB_SIDES="new old" ab_dense 2 c=f32 4096,7168,2048 4096,7170,2048 | tee "$OUT/rows.txt"
DG_TUNE_TMA_STORE=0 AB_SIDES="new old" ab_dense 2 4096,7168,2048 4096,7170,2048 | tee -a "$OUT/rows.txt"
echo "dense rows done $((SECONDS - start)) s"
AB_SIDES="cl2 cl new old" AB_ROUNDS=2 ab_grouped k_grouped=4,4096,4096,8192 k_grouped=4,4096,7168,8192 \
  k_grouped=4,7168,7168,8192 k_grouped_no_c=16,7168,4096,1024 k_grouped_no_c=4,4096,7168,8192 | tee -a "$OUT/rows.txt"
echo "grouped rows done $((SECONDS - start)) s"
rm -rf /tmp/ab_new_cuda /tmp/ab_cache_new && cp -r /tmp/ab_cl2_cuda /tmp/ab_new_cuda
ab_kgrouped_tests cl2 $((575 - (SECONDS - start)))
ab_use new; rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls tests_*.log) && rm -f "$OUT"/tests_*.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
