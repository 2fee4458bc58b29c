# Session 64 call 1: experiments/bf16_n4_stores.sh (dense tests with the patch, the tree's 1540 case, rows), then
# experiments/kgrouped_lines_ncu.sh.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_patch_vs_head benchmarks/experiments/bf16_n4_stores.patch
cp .run1.sh "$OUT/run.sh"
python -I -m pytest tests/test_gpu_dense.py -k "1540 or odd or options or sweep" --collect-only -q \
  -p no:cacheprovider 2>/dev/null | grep "::" >/tmp/d_ids.txt
rm -f /tmp/d_ids_*; split -n r/3 -d /tmp/d_ids.txt /tmp/d_ids_
for part in /tmp/d_ids_0*; do
  DG_JIT_CACHE_DIR=/tmp/ab_cache_new JDG_TEST_LIMIT=200 ab_tests "n4_new_${part##*_}" $(cat "$part") &
done; wait
ab_use old
DG_JIT_CACHE_DIR=/tmp/ab_cache_old JDG_TEST_LIMIT=100 ab_tests tree_1540 tests/test_gpu_dense.py -k 1540
echo "tests done $((SECONDS - start)) s"
ab_dense 2 4096,7172,2048 4096,2116,7168 | tee "$OUT/dense_rows.txt"
DG_TUNE_TMA_STORE=0 ab_dense 2 4096,7168,2048 | tee -a "$OUT/dense_rows.txt"
echo "rows done $((SECONDS - start)) s"
ab_use old
metrics=lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum
metrics+=,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
metrics+=,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_write.sum,dram__bytes_read.sum,gpu__time_duration.sum
ab_sent
ab_side all benchmarks/experiments/kgrouped_f32_lines_all.patch
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for side in old all; do
  ab_use "$side"
  for shape in 4,4096,2048,8192 4,4096,4096,8192; do
    JDG_PROFILE_RUNS=1 DG_JIT_CACHE_DIR=/tmp/ab_cache_$side timeout -k 5 100 "$NCU" -k regex:jdg_fp8_gemm -c 1 \
      --clock-control none --metrics "$metrics" python tools/profile_one.py k_grouped "$shape" 2>&1 |
      grep -E "lts__|dram__|gpu__|rror" | sed "s/^/$side $shape | /"
  done
done | tee "$OUT/kgrouped_lines_ncu.txt"
ab_use old; rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls tests_*.log) && rm -f "$OUT"/tests_*.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
