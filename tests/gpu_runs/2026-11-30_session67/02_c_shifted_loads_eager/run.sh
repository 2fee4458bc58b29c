# Session 67 call 2: benchmarks/experiments/c_shifted_loads.sh
set -uo pipefail
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
cp .run2.sh "$OUT/run.sh"
bash benchmarks/experiments/c_shifted_loads.sh
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log 2>/dev/null) && rm -f "$OUT"/*.log
echo "done $SECONDS s"
