# Session 68 call 1 (2 x H200): the multi-device tests and the demo on both GPUs, tree c42f3bc + gpu_session.sh multi.
set -uo pipefail
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
cp .run1.sh "$OUT/run.sh"
bash tools/gpu_session.sh multi
rm -f "$OUT/build.log"
echo "done $SECONDS s"
