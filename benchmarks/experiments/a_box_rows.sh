#!/usr/bin/env bash
# A's TMA copies in boxes of at most DG_TUNE_A_BOX_ROWS rows (NOTES 46: in the copy ring, 256 x 128 stages laid out
# as a large-M GEMM's tiles took 923 cycles per K block at 132 CTAs with A in four 64-row copies against 1180-1400 with
# one or two); measured, not taken: the script applies a_box_rows.patch (the DG_TUNE_A_BOX_ROWS knob). Same build,
# alternating. One call per part:
#   bash benchmarks/experiments/a_box_rows.sh dense     the GPU tests with 64-row copies, then the dense rows
#   bash benchmarks/experiments/a_box_rows.sh grouped   the grouped rows, one / 64-row copies twice (not run yet)
set -uo pipefail
git apply benchmarks/experiments/a_box_rows.patch || exit 1
. benchmarks/experiments/ab_headers.sh
ab_setup
big="4096,2112,7168 4096,24576,1536 4096,32768,512 4096,7168,16384 4096,4096,7168 4096,7168,2048 2048,2112,7168"
small="128,2112,7168 128,4096,7168 128,7168,16384 128,24576,1536 64,2112,7168 64,4096,7168"
dense() {  # variants (unset = the default, one copy per CTA share), shapes
  local variants=$1; shift
  for v in $variants; do
    if [ "$v" = one ]; then unset DG_TUNE_A_BOX_ROWS; else export DG_TUNE_A_BOX_ROWS=$v; fi
    timeout -k 5 150 python benchmarks/experiments/dense_rows.py "$@" 2>&1 | grep -E " us |rror" | sed "s/^/a$v /"
  done
  unset DG_TUNE_A_BOX_ROWS
}
case "${1:-dense}" in
  dense)
    export DG_TUNE_A_BOX_ROWS=64
    ab_tests dense tests/test_gpu_dense.py &
    ab_tests grouped tests/test_gpu_grouped.py &
    wait
    unset DG_TUNE_A_BOX_ROWS
    { dense "one 64 32" $big $small; dense "64 one" $big; } 2>&1 | tee "$OUT/a_box_dense.txt" ;;
  grouped)
    for v in one 64 one 64; do
      if [ "$v" = one ]; then unset DG_TUNE_A_BOX_ROWS; else export DG_TUNE_A_BOX_ROWS=$v; fi
      timeout -k 5 150 python benchmarks/experiments/grouped_rows.py contiguous masked k_grouped 2>&1 |
        grep -E " us |rror" | sed "s/^/a$v /"
    done 2>&1 | tee "$OUT/a_box_grouped.txt"
    unset DG_TUNE_A_BOX_ROWS ;;
esac
echo "elapsed $((SECONDS - start)) s"
