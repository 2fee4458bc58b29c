#!/usr/bin/env bash
# Prepared, not run (NOTES 129): the gathered transposing casts' grid order in groups of column tiles
# (gather_order.patch: every row block of 8 column tiles, then the next 8), so that a group's columns of x stay in the
# L2 until all k readers of each row have been (Nsight Compute, session 84: DRAM at 66.5% of peak in the gathered
# cast, x read ~2.8 times from DRAM). The sent tree ("old", sent_tree) against it with the patch ("new"): the
# quantization tests and test_nn.py with the new package (the patch adds gathered cases of 10 column tiles), the MoE
# step's kernels old / new (two rounds), then the gathered case of transposed_cast.py with old, new and groups of 4
# and 16 tiles (two rounds each). One device call, ~5 minutes.
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
sent_tree /tmp/tree_old
git apply benchmarks/experiments/gather_order.patch || { echo "gather_order.patch does not apply"; exit 1; }
for g in 4 16; do
  sent_tree /tmp/tree_g$g
  sed -i "s/kGatherTiles = 8;/kGatherTiles = $g;/" /tmp/tree_g$g/cuda/jax_deepgemm/fp8_quantize.cuh
  grep -q "kGatherTiles = $g;" /tmp/tree_g$g/cuda/jax_deepgemm/fp8_quantize.cuh || { echo "no kGatherTiles"; exit 1; }
done
bash benchmarks/experiments/step_ab.sh /tmp/tree_old tests/test_transposed_cast.py tests/test_quantization.py \
  tests/test_nn.py
ab_install g4 /tmp/tree_g4 g16 /tmp/tree_g16
for round in 1 2; do
  for s in old new g4 g16; do
    side $s timeout -k 5 100 python $R/benchmarks/experiments/transposed_cast.py "through the gather" --no-xla 2>&1 |
      grep -E "kernel" | sed "s/^/$s r$round /" | tee -a "$OUT/cases.txt"
  done
done
git checkout -- cuda tests
date -u
