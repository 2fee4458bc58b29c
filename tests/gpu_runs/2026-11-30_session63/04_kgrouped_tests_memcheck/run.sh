# Session 63 call 4 (tree 1692afe: k-grouped f32 line stores): the k-grouped GPU tests (grouped + configs, 59 cases) and
# test_differentiable.py in 6 processes (ids.txt), then memcheck of the k-grouped tests of test_gpu_grouped.py and
# test_gpu_configs.py (alone).
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup
cp .run4.sh "$OUT/run.sh"; cp .ids4.txt "$OUT/ids.txt"
export DG_JIT_CACHE_DIR=/tmp/jdg-tests63
FINAL=$OUT; OUT=/tmp/tl64; rm -rf $OUT /tmp/summary64.txt; mkdir -p $OUT
rm -f /tmp/ids64_*; split -n r/6 -d .ids4.txt /tmp/ids64_
for part in /tmp/ids64_0*; do JDG_TEST_LIMIT=240 ab_tests "kg_${part##*_}" $(cat "$part") >>/tmp/summary64.txt & done
wait; cat /tmp/summary64.txt | tee $FINAL/summary.txt
echo "tests done $((SECONDS - start)) s"
OUT=$FINAL
JDG_SANITIZE_FILES="tests/test_gpu_grouped.py tests/test_gpu_configs.py" JDG_SANITIZE_K="k_grouped" \
  JDG_SANITIZE_LIMIT=$((560 - (SECONDS - start))) bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -5
tar czf $OUT/tests.tgz -C /tmp/tl64 . && rm -f $OUT/build.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
