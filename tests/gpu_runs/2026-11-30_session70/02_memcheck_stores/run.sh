# Session 70 call 2: compute-sanitizer memcheck of the store and C cases (shifted stores of odd N and every
# N % 8 != 0, store widths, the dense options with C) on the current kernels (ba847c8's store_pieces_shifted).
set -uo pipefail
cp .run2.sh "$OUT/run.sh"
JDG_SANITIZE_FILES="tests/test_gpu_configs.py tests/test_gpu_grouped.py tests/test_gpu_dense.py" \
  JDG_SANITIZE_K="shifted or store_widths or odd_n or test_dense_options" \
  JDG_SANITIZE_LIMIT=420 bash tools/gpu_session.sh sanitize memcheck 2>&1 | tail -6
rm -f "$OUT/build.log"
echo "done $SECONDS s"
