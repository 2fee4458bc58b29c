# Session 70 call 5: compute-sanitizer racecheck of the k-grouped bf16 TMA-store epilogue (session 61's shared-memory
# staging, never racechecked) and the k-grouped bf16-out cases.
set -uo pipefail
cp .run5.sh "$OUT/run.sh"
JDG_SANITIZE_FILES="tests/test_gpu_configs.py tests/test_gpu_grouped.py" \
  JDG_SANITIZE_K="tma_store_k_grouped or k_grouped_bf16_out" \
  JDG_SANITIZE_LIMIT=330 bash tools/gpu_session.sh sanitize racecheck 2>&1 | tail -6
rm -f "$OUT/build.log"
echo "done $SECONDS s"
