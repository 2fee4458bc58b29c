# Session 70 call 1: the rewritten `par 1` phase itself (test_gpu_configs.py in 14 processes).
set -uo pipefail
cp .run1.sh "$OUT/run.sh"
JDG_PAR_LIMIT=500 bash tools/gpu_session.sh par 1
rm -f "$OUT/build.log"
echo "done $SECONDS s"
