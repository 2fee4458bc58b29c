# Session 66 call 6: experiments/bf16_shifted_edges_memcheck.sh (sides edges, cxx, old = the tree)
set -uo pipefail
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
mkdir -p "$OUT"; cp .run6.sh "$OUT/run.sh"
bash benchmarks/experiments/bf16_shifted_edges_memcheck.sh
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log 2>/dev/null) && rm -f "$OUT"/*.log
echo "done $SECONDS s"
