#!/usr/bin/env bash
# Where a masked K = 2048 GEMM's time goes (benchmarks/NOTES.md 56): DG_PROFILE_WAITS (cycles per K block, who
# waits, epilogue share, SM clock) of masked 1 x 952 rows x 7168 x 2048 (the table's 1 x 1024 draw) on the model's
# 128 x 128 pipelined tiles, forced 256 x 128 and 128 x 128 unpipelined, against dense GEMMs of the same rows and of
# M = 4096, and the table's 4 x 256 row. One device call:
#   bash benchmarks/experiments/masked_short_k_waits.sh      (logs under $OUT)
. "$(dirname "$0")/prelude.sh"
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=10
build
run() {
  echo "## $* $(env | grep -E '^DG_TUNE' | sort | tr '\n' ' ')"
  timeout -k 5 60 python tools/profile_one.py "$@" 2>&1 | grep -v -E "^I[0-9]|^E[0-9]{4} |^W[0-9]{4} "
}
{
  run masked 1,4096,7168,2048,952,1024
  DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 run masked 1,4096,7168,2048,952,1024
  DG_TUNE_ACC_PIPELINE=0 run masked 1,4096,7168,2048,952,1024
  DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 run dense 952,7168,2048
  run dense 952,7168,2048
  run dense 4096,7168,2048
  run masked 4,4096,7168,2048,256,256
} >"$OUT/waits.log"
python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
grep "jax_deepgemm: " "$OUT/waits.log" | sort -u >"$OUT/waits_configs.txt"
