#!/usr/bin/env bash
# Where a tail-split kernel's ~0.7 us per tile goes (NOTES 27, 50): the plain kernels with the tail split's code
# paths compiled in but never taken (dead_split_paths.patch: a split half's K loops, exchange and epilogue copy
# behind a run-time condition that never holds; SASS of dense 256 x 128 at K = 2048: 5065 lines against 2473, the
# tail-split kernel's 5129) against the unpatched headers, alternating: dense short-K rows (the tail split's +5% / +9% /
# +8% in NOTES 50) and a long-K control, two rounds; the masked rows once each; then test_gpu_dense.py with the
# patch. If the code's presence is the cost (instruction cache, layout, register allocation), the dead-path
# kernels run as much slower as the tail-split ones; if not, within 1%.
# One device call, from the repo root: bash benchmarks/experiments/dead_split_paths.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
# old: the headers as sent (not git HEAD's: the device copy's HEAD may lag its tree); new: them patched
rm -rf /tmp/dead_old_cuda && cp -r cuda /tmp/dead_old_cuda
git apply benchmarks/experiments/dead_split_paths.patch || exit 1
ab_prepare /tmp/dead_old_cuda
ab_dense 2 4096,7168,2048 4096,32768,512 4096,24576,1536 4096,7168,16384 2>&1 | tee "$OUT/dead_dense.txt"
ab_grouped masked 2>&1 | tee "$OUT/dead_masked.txt"
ab_use new
ab_tests dense tests/test_gpu_dense.py
ab_use new
echo "elapsed $((SECONDS - start)) s"
