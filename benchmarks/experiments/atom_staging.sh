#!/usr/bin/env bash
# A sixth stage for 128 x 128 tiles, a fifth for 128 x 192 (benchmarks/NOTES.md 56): atom_staging.patch stages the
# TMA-store epilogue one 64-column atom at a time (DG_TUNE_ATOM_STAGING=1, JDG_TMA_STORE 2), which frees 16 KB
# (128 x 128) / 32 KB (128 x 192, 256 x 128) for stages. Without the knob the kernels' SASS is that of HEAD
# (checked with NVRTC 13.0 here: masked 128 x 128, dense 128 x 192 B-shared clusters, dense 256 x 128), so one build
# times both sides. 256 x 128 stays at 3 stages: its rows are the control, the per-atom wait's cost alone.
# Prediction: if the 128 x 128 loop's waits (consumers 18-23% for data, producer 38% for stages) are the copies'
# latency, the masked K = 2048 rows -5% to -10% and 4096 x 2112 x 7168 a few %; if the chip-wide feed rate is (NOTES
# 16), every row +0-2%, which the 256 x 128 rows (no extra stage) show in any case.
# One device call (~8 min):
#   bash benchmarks/experiments/atom_staging.sh      (logs under $OUT; the patch is applied, then taken back)
# The patch applies to the kernel as one file (fp8_gemm.cuh before its split into parts): run it at c03d480.
. "$(dirname "$0")/prelude.sh"
git apply benchmarks/experiments/atom_staging.patch || exit 1
trap 'git apply -R benchmarks/experiments/atom_staging.patch' EXIT
build
# Correctness first: every TMA-store configuration test and the masked tests with atom staging.
part() {
  local name=$1; shift
  DG_TUNE_ATOM_STAGING=1 timeout -k 5 240 python -I -m pytest "$@" -q -p no:cacheprovider >"$OUT/tests_$name.log" 2>&1
  echo "$name: $(tail -1 "$OUT/tests_$name.log")"
}
part tma_bm64 tests/test_gpu_configs.py -k "tma_store and bm64" &
part tma_bm128 tests/test_gpu_configs.py -k "tma_store and bm128" &
part tma_bm256 tests/test_gpu_configs.py -k "tma_store and bm256" &
part grouped tests/test_gpu_grouped.py -k "masked or contiguous" &
part dense tests/test_gpu_dense.py &
wait
dense=(4096,2112,7168 8192,2112,7168 2048,2112,7168 4096,7168,2048 4096,24576,1536)
for round in 1 2; do
  for atom in 0 1; do
    echo "# round $round, DG_TUNE_ATOM_STAGING=$atom"
    DG_TUNE_ATOM_STAGING=$atom timeout -k 5 60 python benchmarks/experiments/grouped_rows.py masked 2>&1 | grep masked
    DG_TUNE_ATOM_STAGING=$atom timeout -k 5 60 python benchmarks/experiments/dense_rows.py "${dense[@]}" 2>&1 |
      grep -E "^ *[0-9]"
  done
done | tee "$OUT/atom_staging.txt"
