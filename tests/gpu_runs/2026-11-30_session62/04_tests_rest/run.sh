# Session 62 call 4: the GPU tests call 3's time limit left (its ids in .remaining_ids.txt), 8 processes.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup
cp .run4.sh "$OUT/run.sh"; cp .remaining_ids.txt "$OUT/"
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
export DG_JIT_CACHE_DIR=/tmp/jdg-tests
FINAL=$OUT; OUT=/tmp/tl; mkdir -p $OUT
split -n r/8 -d .remaining_ids.txt /tmp/rids_
for part in /tmp/rids_0*; do JDG_TEST_LIMIT=265 ab_tests "rest_${part##*_}" $(cat "$part") >>/tmp/summary.txt & done
wait; cat /tmp/summary.txt | tee $FINAL/summary.txt
OUT=$FINAL; tar czf $OUT/tests.tgz -C /tmp/tl . && rm -f $OUT/build.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
