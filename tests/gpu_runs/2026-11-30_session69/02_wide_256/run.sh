set -uo pipefail
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
cp .run1.sh "$OUT/run.sh"
bash benchmarks/experiments/wide_256.sh
(cd "$OUT" && tar czf configs.tgz configs_*.txt tests_wide.log && rm -f configs_*.txt tests_wide.log build.log)
