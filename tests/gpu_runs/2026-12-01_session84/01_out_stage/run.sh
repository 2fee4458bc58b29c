#!/usr/bin/env bash
# Prepared, not run (NOTES 128): the transposing kernel's write-out stage with one pointer stepped per row
# (out_stage.patch: no 64-bit index arithmetic or division per 8-byte unit; unsigned tile offsets). Static SASS of
# four bf16 variants 3864-3936 -> 2104-2152 instructions (mostly the byte-wise path's code), the aligned path's ~27
# instructions per unit -> ~12. The sent tree with the patch ("new") against the sent tree ("old", git archive of
# HEAD): the quantization test files with the new package, the MoE step's kernels old / new (two rounds), then
# transposed_cast.py's bf16 cases with each package. One device call, ~5 minutes.
. "$(dirname "$0")/prelude.sh"
mkdir -p /tmp/tree_old && git archive HEAD | tar -x -C /tmp/tree_old --exclude=tests --exclude=benchmarks
git apply benchmarks/experiments/out_stage.patch || { echo "out_stage.patch does not apply"; exit 1; }
bash benchmarks/experiments/step_ab.sh /tmp/tree_old tests/test_transposed_cast.py tests/test_quantization.py \
  tests/test_nn.py
. tools/ab_side.sh
for s in old new; do
  side $s timeout -k 5 200 python $R/benchmarks/experiments/transposed_cast.py bf16 --no-xla 2>&1 |
    grep -E "kernel" | sed "s/^/$s /" | tee -a "$OUT/cases.txt"
done
git checkout -- cuda
date -u
