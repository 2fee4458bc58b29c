#!/usr/bin/env bash
# Prepared in session 78 (NOTES 122), not run: token_cast_gather.patch lets the rowwise quantization kernel read x's
# rows through a row index (token_cast_to_fp8(x, row_index=...)), and the MoE layer's gathered GEMMs
# (dispatched_ragged_dot's forward, combined_ragged_dot's dgrad) quantize x[order // top_k] that way instead of
# quantizing x's T rows and gathering T * top_k FP8 rows (and scales) as 32-bit words in an XLA gather.
# Prediction: the MoE step (step_kernels.py moe_x_bf16) -40 to -110 us: two XLA gathers of [16384, 7168] FP8 rows go;
# the rowwise kernel reads 16384 bf16 rows through the index (each of x's 4096 rows 4 times, partly from L2) instead
# of 4096.
#
# One device call from the repository root (~6 min): builds HEAD and HEAD + the patch with pip --target, runs the
# patched tree's quantization, differentiable and MoE tests with the patch (8 processes), the per-token cases of
# transposed_cast.py (the gathered one new), then the MoE step, old / new, two rounds, into one file.
set -u
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT/logs"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
R=$PWD
rm -rf /tmp/tree_new && mkdir -p /tmp/tree_new && git archive HEAD | tar -x -C /tmp/tree_new
(cd /tmp/tree_new && git apply "$R/benchmarks/experiments/token_cast_gather.patch") || { echo "patch failed"; exit 1; }
pip_target() { python -m pip install -q --no-build-isolation --no-deps --target "$@"; }
pip_target /tmp/pkg_new /tmp/tree_new > "$OUT/logs/build_new.log" 2>&1 &
pip_target /tmp/pkg_old . > "$OUT/logs/build_old.log" 2>&1 &
wait
T build
side() {  # side, then a command run with that package first on the path
  local s=$1; shift
  ( cd /tmp; export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_$s:/tmp/tree_new/benchmarks/experiments
    python -c "import jax_deepgemm as j; assert j.__file__.startswith('/tmp/pkg_$s'), j.__file__" || exit 1
    "$@" )
}
N=/tmp/tree_new/tests
side new python -m pytest $N/test_transposed_cast.py $N/test_differentiable.py $N/test_nn.py \
  $N/test_moe_expert_parallel.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" |
  sed "s|^|/tmp/tree_new/|" > /tmp/ids.txt
split -n r/8 -d /tmp/ids.txt /tmp/ids_
for f in /tmp/ids_*; do
  ( mapfile -t c < "$f"; side new timeout -k 5 230 python -m pytest "${c[@]}" -q -rs -p no:cacheprovider \
      > "$OUT/logs/tests_${f##*_}.log" 2>&1 ) &
done; wait
T tests
echo "tests: $(wc -l < /tmp/ids.txt) cases"
for f in "$OUT"/logs/tests*.log; do echo "$(basename "$f"): $(tail -1 "$f")"; done
grep -h -E "^FAILED|^ERROR" "$OUT"/logs/tests*.log | head -20
side new timeout -k 5 90 python /tmp/tree_new/benchmarks/experiments/transposed_cast.py "per token" 2>&1 |
  grep -v -i warning | tee "$OUT/per_token.txt"
for round in 1 2; do
  for s in old new; do
    side $s timeout -k 5 100 python /tmp/tree_new/benchmarks/experiments/step_kernels.py moe_x_bf16 2>&1 |
      grep -v -i warning | head -20 | sed "s/^/$s r$round /" >> "$OUT/steps.txt"
    T steps $s round $round
  done
done
grep -E "us of kernels|jdg_|gather" "$OUT/steps.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
