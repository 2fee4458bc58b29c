# Session 70 call 6: compute-sanitizer memcheck of the k-grouped cases (f32 line loads of C and line stores,
# bf16 out, hostile sizes) with the current kernels, as far as the call's time allows (-v lists what passed).
set -uo pipefail
cp .run6.sh "$OUT/run.sh"
JDG_SANITIZE_FILES="tests/test_gpu_grouped.py tests/test_gpu_configs.py" JDG_SANITIZE_K="k_grouped" \
  JDG_SANITIZE_LIMIT=240 bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -6
rm -f "$OUT/build.log"
echo "done $SECONDS s"
