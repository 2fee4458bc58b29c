# Session 66 call 1: experiments/bf16_shifted_v4.sh (sides v4, even, old = the tree 1e13dd6)
set -uo pipefail
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
mkdir -p "$OUT"; cp .run1.sh "$OUT/run.sh"
bash benchmarks/experiments/bf16_shifted_v4.sh
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log 2>/dev/null) && rm -f "$OUT"/*.log
echo "done $SECONDS s"
