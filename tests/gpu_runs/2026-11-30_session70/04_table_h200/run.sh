# Session 70 call 4: the H200 table at HEAD and the demo.
set -uo pipefail
cp .run4.sh "$OUT/run.sh"
JDG_COMMIT=9eec6c1 bash tools/gpu_session.sh bench 2>&1 | tail -5
rm -f "$OUT/build.log"
echo "done $SECONDS s"
