#!/usr/bin/env bash
# Session 85, after gather_order.sh (NOTES 130): the gathered casts' group of column tiles. gather_order.patch with
# kGatherTiles = 1, 2, 3, 4, 6, 8 on the gathered case of transposed_cast.py (two rounds); the tests with 4; the MoE
# step's kernels with 8 against 4 (two rounds). One device call, ~5 minutes.
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
git apply benchmarks/experiments/gather_order.patch || { echo "gather_order.patch does not apply"; exit 1; }
args=()
for g in 1 2 3 4 6 8; do
  sent_tree /tmp/tree_g$g
  sed -i "s/kGatherTiles = 8;/kGatherTiles = $g;/" /tmp/tree_g$g/cuda/jax_deepgemm/fp8_quantize.cuh
  grep -q "kGatherTiles = $g;" /tmp/tree_g$g/cuda/jax_deepgemm/fp8_quantize.cuh || { echo "no kGatherTiles"; exit 1; }
  args+=(g$g /tmp/tree_g$g)
done
ab_install "${args[@]}"
side g4 env OUT="$OUT" bash -c "cd $R && . benchmarks/experiments/prelude.sh && PYTEST='python -P -m pytest' \
  parallel_tests tests/test_transposed_cast.py tests/test_quantization.py tests/test_nn.py" 2>&1 | tee "$OUT/tests.txt"
for round in 1 2; do
  for g in 1 2 3 4 6 8; do
    side g$g timeout -k 5 100 python $R/benchmarks/experiments/transposed_cast.py "through the gather" --no-xla 2>&1 |
      grep -E "kernel" | sed "s/^/g$g r$round /" | tee -a "$OUT/cases.txt"
  done
done
step_rounds g8 g4 moe_x_bf16
git checkout -- cuda tests
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
