#!/usr/bin/env bash
# Whole-width 192- and 160-wide tiles with the scale-block offset at compile time. Half-width groups (the default
# since NOTES 20) read A from shared memory twice per K block: 128 x 192 moves 80 KB of wgmma reads + 40 KB of copies
# per 768 tensor cycles (937 cycles at 128 bytes per cycle), one group per K block 64 + 40 KB (812). When NOTES 20/31
# measured one group slower (1464 against 1265 cycles per K block) its promotion still chose each chunk's block scale
# at run time (32 FSEL per K block); NOTES 32 made the offset a compile-time constant only in the half-width loop.
# whole_width_offsets.patch compiles the whole-width loop per offset too (no FSEL in its promotion; the default
# kernels' SASS unchanged). Same run, with the patch applied: DG_TUNE_SPLIT_HALVES=0 (whole width) against the default
# (half width), alternating, two rounds, on the rows that take 128 x 192 / 64 x 192 tiles; then the GPU tests of the
# whole-width wide tiles. Measured in NOTES 55: whole width +17-19% at M >= 4096, so the patch was not kept.
# One device call, from the repo root (the patch applies to the kernel of 7330090's parent):
#   bash benchmarks/experiments/whole_width_offsets.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
git apply benchmarks/experiments/whole_width_offsets.patch || exit 1
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-wide
rows=(4096,2112,7168 8192,2112,7168 4096,2112,2048 128,24576,1536 64,24576,1536)
for round in 1 2; do
  for halves in 1 0; do
    DG_TUNE_SPLIT_HALVES=$halves timeout -k 5 100 python benchmarks/experiments/dense_rows.py "${rows[@]}" 2>&1 |
      grep -E " us |rror" | sed "s/^/r$round halves$halves | /"
  done
done | tee "$OUT/whole_width_dense.txt"
timeout -k 5 150 python -I -m pytest tests/test_gpu_configs.py -k "split_halves and halves0" -q -p no:cacheprovider \
  >"$OUT/tests_whole_width.log" 2>&1
tail -1 "$OUT/tests_whole_width.log"; grep -E "^FAILED|^ERROR" "$OUT/tests_whole_width.log" | head -5
git apply -R benchmarks/experiments/whole_width_offsets.patch
echo "elapsed $((SECONDS - start)) s"
