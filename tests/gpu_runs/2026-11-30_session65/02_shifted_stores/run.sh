# Session 65 call 2: experiments/bf16_shifted_stores.sh (side old = 9753dcb's headers in .ab_old, new = the tree)
set -uo pipefail
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
cp .run2.sh "$OUT/run.sh"
bash benchmarks/experiments/bf16_shifted_stores.sh
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log 2>/dev/null) && rm -f "$OUT"/*.log
echo "done $SECONDS s"
