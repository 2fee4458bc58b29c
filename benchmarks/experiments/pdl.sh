#!/usr/bin/env bash
# Programmatic dependent launch (benchmarks/NOTES.md 86; not taken): pdl.patch launches every kernel with the
# programmatic stream serialization attribute unless DG_PDL=0, waits in the kernel (griddepcontrol.wait) before its
# first global memory access and lets the next such kernel start (griddepcontrol.launch_dependents); it adds
# tests/test_gpu_pdl.py. Two device calls:
#   bash benchmarks/experiments/pdl.sh tests   build with the patch; its tests, and the GPU tests that run launches
#                                              inside lax.scan (command buffers) with PDL on; then pdl.py (programs
#                                              of 16 launches, PDL off / on)
#   bash benchmarks/experiments/pdl.sh kernel  kernel times (L2 flushed before each call, as the table): HEAD's
#                                              headers against the patch's (griddepcontrol in the prologue) with
#                                              DG_PDL=0, and the patch's with DG_PDL=1, two rounds
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
rm -rf /tmp/ab_old_cuda /tmp/ab_new_cuda && cp -r cuda /tmp/ab_old_cuda  # the headers as sent (HEAD's)
ab_patched benchmarks/experiments/pdl.patch
cp -r cuda /tmp/ab_new_cuda
ab_setup  # $OUT; builds the patched extension (its FFI reads DG_PDL)
diff -r /tmp/ab_old_cuda /tmp/ab_new_cuda >"$OUT/ab_change.diff"
case "${1:-}" in
  tests)
    JDG_TEST_LIMIT=300 ab_tests pdl tests/test_gpu_pdl.py tests/test_gpu_dense.py tests/test_gpu_grouped.py \
      -k "pdl or scan or sweep or masked"
    timeout -k 5 200 python benchmarks/experiments/pdl.py 3 2>&1 | grep -v -E "^[IWE][0-9]{4} " | tee "$OUT/pdl.txt"
    ;;
  kernel)
    rows=(4096,7168,16384 4096,2112,7168 4096,7168,2048 64,7168,2048 64,2112,7168 128,4096,7168 128,7168,16384)
    for round in 1 2; do
      for side in "old 0" "new 0" "new 1"; do
        set -- $side
        ab_use "$1"
        DG_PDL=$2 DG_JIT_CACHE_DIR=/tmp/ab_cache_$1 timeout -k 5 120 python benchmarks/experiments/dense_rows.py \
          "${rows[@]}" 2>&1 | grep -E " us |rror" | sed "s/^/$1 pdl$2 r$round /"
      done
    done | tee "$OUT/pdl_kernel.txt"
    ab_use new
    ;;
  *) echo "usage: pdl.sh tests | kernel" >&2; exit 2 ;;
esac
echo "elapsed $((SECONDS - start)) s"
