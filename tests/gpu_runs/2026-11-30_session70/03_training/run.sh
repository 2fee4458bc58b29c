# Session 70 call 3: the FP8 training paths and the layer tests with the current kernels (last run in session 60):
# `tools/gpu_session.sh training` without the demo.
set -uo pipefail
cp .run3.sh "$OUT/run.sh"
JDG_TRAINING_DEMO=0 bash tools/gpu_session.sh training 2>&1 | tail -30
rm -f "$OUT/build.log"
echo "done $SECONDS s"
