#!/usr/bin/env bash
# Contiguous and ragged rows of the given shapes (grouped_rows.py's contiguous=G,rows,N,K: groups drawn as the table
# draws them) with the model's tiles and with each forced BLOCK_M of BLOCK_MS (default "model 256 128"), one build,
# alternating over two rounds (the first compiles: a longer limit). Each run's configurations (DG_PRINT_CONFIGS) and
# times in its own log; the times of all runs in $OUT/grouped_block_m_times.txt.
#     [BLOCK_MS="model 256"] bash benchmarks/experiments/grouped_block_m.sh contiguous=8,1024,7168,7168 ...
. "$(dirname "$0")/prelude.sh"
build
read -r -a block_ms <<<"${BLOCK_MS:-model 256 128}"
for round in 1 2; do
  for block_m in "${block_ms[@]}"; do
    log="$OUT/round${round}_$block_m.txt"
    if [ "$block_m" = model ]; then unset DG_TUNE_BLOCK_M; else export DG_TUNE_BLOCK_M=$block_m; fi
    DG_PRINT_CONFIGS=1 timeout -k 5 $((round == 1 ? 150 : 80)) python benchmarks/experiments/grouped_rows.py "$@" \
      >"$log" 2>&1
    echo "# round $round, BLOCK_M $block_m"
    grep grouped "$log" | grep -v "^jax_deepgemm"
  done
done | tee "$OUT/grouped_block_m_times.txt"
unset DG_TUNE_BLOCK_M
