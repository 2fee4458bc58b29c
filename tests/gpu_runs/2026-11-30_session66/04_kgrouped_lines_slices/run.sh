# Session 66 call 4: experiments/kgrouped_lines_slices.sh (side old = the tree)
set -uo pipefail
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
mkdir -p "$OUT"; cp .run4.sh "$OUT/run.sh"
bash benchmarks/experiments/kgrouped_lines_slices.sh
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log 2>/dev/null) && rm -f "$OUT"/*.log
echo "done $SECONDS s"
