#!/usr/bin/env bash
# Step 12 (NOTES 66): contiguous and ragged groups of >= 512 rows over K >= 4096 take 256-row tiles. One build, the
# model's picks against the previous ones (DG_TUNE_BLOCK_M=128 gives them on these rows: 128 x 192 / 160), alternating
# over two rounds, on contiguous_mid_groups.sh's rows; then the GPU tests of the two modes with the new defaults.
#     bash benchmarks/experiments/grouped_tall.sh     (one device call)
. "$(dirname "$0")/prelude.sh"
build
shapes=(contiguous=8,1024,7168,7168 contiguous=8,512,7168,7168 contiguous=16,512,4096,7168
        contiguous=4,1024,7168,4096)
for round in 1 2; do
  for block_m in model 128; do
    log="$OUT/round${round}_$block_m.txt"
    if [ $block_m = model ]; then unset DG_TUNE_BLOCK_M; else export DG_TUNE_BLOCK_M=128; fi
    DG_PRINT_CONFIGS=1 timeout -k 5 $((round == 1 ? 120 : 70)) python benchmarks/experiments/grouped_rows.py \
      "${shapes[@]}" >"$log" 2>&1
    echo "# round $round, BLOCK_M $block_m"
    grep grouped "$log" | grep -v "^jax_deepgemm"
  done
done | tee "$OUT/grouped_tall_times.txt"
unset DG_TUNE_BLOCK_M
timeout -k 5 120 python -I -m pytest tests/test_gpu_grouped.py -q -rs -p no:cacheprovider -k "contiguous or ragged" \
  >"$OUT/grouped_tests.log" 2>&1
tail -3 "$OUT/grouped_tests.log"
