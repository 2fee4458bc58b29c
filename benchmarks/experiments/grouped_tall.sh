#!/usr/bin/env bash
# Step 12 as session 31 took it (NOTES 66; its bounds moved in 67): contiguous and ragged groups of >= 512 rows
# over K >= 4096 take 256-row tiles. One build, the model's picks against the previous ones (DG_TUNE_BLOCK_M=128
# gives them on these rows: 128 x 192 / 160), alternating over two rounds, on contiguous_mid_groups.sh's rows; then
# the GPU tests of the two modes with the new defaults.
#     bash benchmarks/experiments/grouped_tall.sh     (one device call)
OUT="${OUT:-./gpu-out}"
BLOCK_MS="model 128" bash "$(dirname "$0")/grouped_block_m.sh" contiguous=8,1024,7168,7168 \
  contiguous=8,512,7168,7168 contiguous=16,512,4096,7168 contiguous=4,1024,7168,4096
timeout -k 5 120 python -I -m pytest tests/test_gpu_grouped.py -q -rs -p no:cacheprovider -k "contiguous or ragged" \
  >"$OUT/grouped_tests.log" 2>&1
tail -3 "$OUT/grouped_tests.log"
