#!/usr/bin/env bash
# The quantization kernels with fewer instructions per warp (NOTES 129; Nsight Compute on the gathered cast, session
# 84: ~74% of issue slots used): a bfloat16 pair's high element without a permute, the gathered rows' offsets formed
# once per CTA in shared memory, the plain rows through one stepped pointer, the CTA index's divisions as multiplies,
# and __launch_bounds__ holding the registers at 48 / 80. The sent tree ("new") against OLD ("old"):
# the quantization test files with the new package, the MoE step's kernels old / new (two rounds), then
# transposed_cast.py's bf16 cases with each package. One device call, ~5 minutes. `bash quantize_instructions.sh OLD`,
# OLD a carried tree (.abtrees/<commit>: the device's git HEAD can lag the sent tree, session 84).
. "$(dirname "$0")/prelude.sh"
git log --oneline -1 | sed 's/^/device git HEAD: /'
old=${1:?usage: quantize_instructions.sh OLD_TREE [--no-tests]}
tests="tests/test_transposed_cast.py tests/test_quantization.py tests/test_swiglu.py tests/test_hostile_data.py"
tests+=" tests/test_nn.py"
[ "${2:-}" = --no-tests ] && tests=""
bash benchmarks/experiments/step_ab.sh "$old" $tests
. tools/ab_side.sh
for s in old new; do
  side $s timeout -k 5 200 python $R/benchmarks/experiments/transposed_cast.py bf16 --no-xla 2>&1 |
    grep -E "kernel" | sed "s/^/$s /" | tee -a "$OUT/cases.txt"
done
date -u
