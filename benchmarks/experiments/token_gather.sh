#!/usr/bin/env bash
# Session 85 (NOTES 130): the MoE GEMMs' gathered A operands quantized per token as the rowwise kernel reads them
# through the dispatch's index (123's patch, neutral then), now in the gathered order of 19929f5 (each column tile's
# row blocks in turn). `bash token_gather.sh .abtrees/<commit>` (carried: the tree before the change). step_ab.sh's
# tests and MoE step, old / new; the gathered cases of transposed_cast.py; then the layer tests whose subprocesses
# need the package installed in place. One device call, ~6 minutes.
. "$(dirname "$0")/prelude.sh"
old=${1:?usage: token_gather.sh OLD_TREE}
bash benchmarks/experiments/step_ab.sh "$old" tests/test_transposed_cast.py tests/test_cuda_lowering.py \
  tests/test_nn.py tests/test_differentiable.py
. tools/ab_side.sh
for round in 1 2; do
  for s in old new; do
    side $s timeout -k 5 100 python $R/benchmarks/experiments/transposed_cast.py "through the gather" --no-xla 2>&1 |
      grep -E " kernel " | sed "s/^/$s r$round /" | tee -a "$OUT/cases.txt"
  done
done
build
parallel_tests tests/test_moe_expert_parallel.py tests/test_remat.py 2>&1 | tee "$OUT/tests_inplace.txt"
tar czf "$OUT/logs_inplace.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
date -u
