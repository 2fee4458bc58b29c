set -u
# racecheck, only this package's kernels instrumented, over memcheck's selection and racecheck's own
JDG_SANITIZE_K="not configs or (bm256-x2 and (ragged or dense_per_row or masked_rows or contiguous)) or bm128-bn192-tma1 or (split_k and bm128-bn64) or (bm256-x1 and k_grouped) or contiguous_segments or c_prefetch or (tail_split and (bm128-bn64 or bm256-bn128) and (masked or contiguous or 1x1 or 3x6)) or (bm256-x1 and (ragged or masked_rows or contiguous or dense_per_row or k_grouped)) or (bm128-x2 and masked_rows) or (bm256-bn128-tma1 and (tma_store_dense or inside_scan)) or (bm128-x1-pipe and (dense or k_grouped)) or (split_k and bm64-bn32 and (many or scan)) or (tail_split and bm128-bn64 and (masked or bfloat16-3x6))" JDG_SANITIZE_ARGS="--kernel-name kns=jdg" \
  JDG_SANITIZE_PROCS=8 JDG_SANITIZE_LIMIT=470 bash tools/gpu_session.sh sanitize racecheck 2>&1 | tee "$OUT/sanitize.txt"
cp .run5.sh "$OUT/run.sh"
