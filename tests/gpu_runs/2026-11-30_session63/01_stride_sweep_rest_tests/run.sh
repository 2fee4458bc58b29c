# Session 63 call 1: the f32 line-store stride sweep (prepared in session 62), then the 45 configs cases session 62
# did not reach + the new dense bit-equality test, in 6 processes (the tree's headers).
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_patch_vs_head benchmarks/experiments/kgrouped_f32_lines.patch
cp .run1.sh "$OUT/run.sh"; cp .ids1.txt "$OUT/ids.txt"
AB_ROUNDS=2 ab_grouped k_grouped=4,4096,2048,8192 k_grouped=4,4096,3072,8192 k_grouped=4,4096,4096,8192 \
  k_grouped=4,4096,7168,8192 k_grouped=4,7168,2048,8192 k_grouped=4,7168,7168,8192 | tee "$OUT/stride_rows.txt"
echo "rows done $((SECONDS - start)) s"
ab_use old
git diff --stat -- cuda | tail -1
export DG_JIT_CACHE_DIR=/tmp/jdg-tests63
FINAL=$OUT; OUT=/tmp/tl63; rm -rf $OUT; mkdir -p $OUT
rm -f /tmp/ids63_*; split -n r/6 -d .ids1.txt /tmp/ids63_
for part in /tmp/ids63_0*; do JDG_TEST_LIMIT=$((560 - (SECONDS - start))) ab_tests "rest_${part##*_}" $(cat "$part") >>/tmp/summary63.txt & done
wait; cat /tmp/summary63.txt | tee $FINAL/summary.txt
OUT=$FINAL; tar czf $OUT/tests.tgz -C /tmp/tl63 . && rm -f $OUT/build.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
