# Session 65 call 4: experiments/bf16_shifted_stores.sh (second form: sides new, s8, old = 9753dcb in .ab_old)
set -uo pipefail
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
cp .run4.sh "$OUT/run.sh"
AB_TEST_SIDES=s8 AB_SIDES="new s8" bash benchmarks/experiments/bf16_shifted_stores.sh
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log 2>/dev/null) && rm -f "$OUT"/*.log
echo "done $SECONDS s"
