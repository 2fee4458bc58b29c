#!/usr/bin/env bash
# session 78, call 2: the MoE training step (the demo's layer, x differentiated) and the demo itself with the rowwise
# per-token quantization kernel against 7c6b14f's package, two rounds; then compute-sanitizer memcheck of the
# token_cast_to_fp8 GPU tests (tools/gpu_session.sh sanitize, which installs the tree editable)
set -u
cp .run2.sh "$OUT/run.sh"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
R=$PWD
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_new . > /tmp/build_new.log 2>&1 || { tail -30 /tmp/build_new.log; exit 1; } &
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_old .abtrees/7c6b14f > /tmp/build_old.log 2>&1 || echo old build failed &
wait
T build
P=$R/benchmarks/experiments
side() {
  local s=$1; shift
  ( cd /tmp; export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_$s:$P
    python -c "import jax_deepgemm as j; assert j.__file__.startswith('/tmp/pkg_$s'), j.__file__" || exit 1
    "$@" )
}
for round in 1 2; do
  for s in old new; do
    side $s timeout -k 5 100 python $P/step_kernels.py moe_x_bf16 2>&1 | grep -v -i warning | head -16 | sed "s/^/$s r$round /" >> $OUT/steps.txt
    T steps $s round $round
  done
done
for round in 1 2; do
  for s in old new; do
    side $s timeout -k 5 120 python -m jax_deepgemm demo 2>&1 | grep -v -E "^E[0-9]{4}|warning" | sed "s/^/$s r$round /" >> $OUT/demo.txt
    T demo $s round $round
  done
done
grep -E "us of kernels|jdg_" $OUT/steps.txt
grep -i -E "forward|backward|ms" $OUT/demo.txt | head -24
JDG_SANITIZE_FILES="tests/test_transposed_cast.py" JDG_SANITIZE_K="token" JDG_SANITIZE_LIMIT=150 \
  timeout -k 5 $(( 570 - ($(date +%s) - t0) )) bash tools/gpu_session.sh sanitize memcheck
T memcheck
