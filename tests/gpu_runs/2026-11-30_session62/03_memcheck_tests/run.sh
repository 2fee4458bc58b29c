# Session 62 call 3: memcheck of the bf16 register stores' partial tiles (alone), then the GPU tests in parallel.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup
cp .run3.sh "$OUT/run.sh"
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
export DG_JIT_CACHE_DIR=/tmp/jdg-tests
JDG_SANITIZE_FILES="tests/test_gpu_grouped.py tests/test_gpu_dense.py" JDG_SANITIZE_LIMIT=150 \
  JDG_SANITIZE_K="ragged or masked or k_grouped_hostile or bf16_out or odd_n or unaligned" \
  bash tools/gpu_session.sh sanitize memcheck
grep -E "ERROR SUMMARY|sanitizer run|passed|failed" $OUT/memcheck.log | tail -8
echo "memcheck done $((SECONDS - start)) s"
FINAL=$OUT; OUT=/tmp/tl; mkdir -p $OUT
python -I -m pytest tests/test_gpu_configs.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" >/tmp/ids.txt
split -n r/5 -d /tmp/ids.txt /tmp/ids_
for part in /tmp/ids_0*; do JDG_TEST_LIMIT=300 ab_tests "configs_${part##*_}" $(cat "$part") >>/tmp/summary.txt & done
JDG_TEST_LIMIT=300 ab_tests grouped tests/test_gpu_grouped.py >>/tmp/summary.txt &
wait; cat /tmp/summary.txt | tee $FINAL/summary.txt
OUT=$FINAL; tar czf $OUT/tests.tgz -C /tmp/tl . && rm -f $OUT/build.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
