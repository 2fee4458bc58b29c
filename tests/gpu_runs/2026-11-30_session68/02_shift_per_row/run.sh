# Session 68 call 2: benchmarks/experiments/shift_per_row.sh on GPU 0 of the 2 x H200 machine.
set -uo pipefail
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
cp .run2.sh "$OUT/run.sh"
CUDA_VISIBLE_DEVICES=0 bash benchmarks/experiments/shift_per_row.sh
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log 2>/dev/null) && rm -f "$OUT"/*.log
echo "done $SECONDS s"
