#!/usr/bin/env bash
# The TMA store for tiles whose width is not a multiple of 64 (32- and 16-column atoms, benchmarks/NOTES.md 60): the
# rows whose default tiles it changes (128 x 160; 16- and 32-wide small-M tiles), with it (DG_TUNE_TMA_STORE=1, the
# default) and without (=0: the register epilogue and the stages it leaves, the kernels before the change), sides
# alternating, two rounds; then the masked rows with 128 x 160 tiles forced, both ways, against the model's tiles.
# Then the TMA-store GPU tests.     bash benchmarks/experiments/narrow_atoms.sh   (one device call, ~8 min)
. "$(dirname "$0")/prelude.sh"
build
wide=(512,5120,7168 384,6400,7168 2048,6400,2048 2048,5120,2048 4096,6400,2048 1024,5120,1024 256,18432,2048
      128,18432,512)
narrow=(64,2112,7168 128,2112,7168 64,4096,7168 128,4096,7168 1024,256,16384 1024,256,1024 384,1536,1024
        128,1536,2048 64,1536,2048)
for round in 1 2; do
  for ts in 1 0; do
    echo "# round $round, DG_TUNE_TMA_STORE=$ts"
    DG_TUNE_TMA_STORE=$ts timeout -k 5 100 python benchmarks/experiments/dense_rows.py "${wide[@]}" "${narrow[@]}" 2>&1 |
      grep -E "^ *[0-9]"
  done
done | tee "$OUT/dense_ab.txt"
{
  echo "# masked, the model's tiles"
  timeout -k 5 60 python benchmarks/experiments/grouped_rows.py masked 2>&1 | grep masked
  for ts in 1 0; do
    echo "# masked, 128 x 160 forced, DG_TUNE_TMA_STORE=$ts"
    DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=160 DG_TUNE_TMA_STORE=$ts timeout -k 5 60 \
      python benchmarks/experiments/grouped_rows.py masked 2>&1 | grep masked
  done
} | tee "$OUT/masked_160.txt"
timeout -k 5 "${JDG_TESTS_LIMIT:-200}" python -I -m pytest tests/test_gpu_configs.py -k tma_store -q -rs \
  -p no:cacheprovider 2>&1 | grep -v -E "^[IWE][0-9]{4} " >"$OUT/tests_tma_store.log"
tail -3 "$OUT/tests_tma_store.log"
