#!/usr/bin/env bash
# session 78, call 1: the rowwise per-token quantization kernel (token_cast_to_fp8) against HEAD 7c6b14f's package
# (XLA's amax and cast fusions): its GPU tests and the training paths' tests, the quantizations alone (kernel
# against XLA), and the MLP and MoE training steps kernel by kernel, two rounds
set -u
cp .run1.sh "$OUT/run.sh"; git diff 7c6b14f -- cuda ffi jax_deepgemm > "$OUT/change.diff"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
R=$PWD
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_new . > $OUT/build_new.log 2>&1 || { tail -30 $OUT/build_new.log; exit 1; } &
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_old .abtrees/7c6b14f > $OUT/build_old.log 2>&1 || echo old build failed &
wait
T build
P=$R/benchmarks/experiments
mkdir -p $OUT/logs
cd /tmp
side() {
  local s=$1; shift
  ( export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_$s:$P
    python -c "import jax_deepgemm as j; assert j.__file__.startswith('/tmp/pkg_$s'), j.__file__" || exit 1
    "$@" )
}
( export DG_JIT_CACHE_DIR=/tmp/ctests PYTHONPATH=/tmp/pkg_new
  python -m pytest $R/tests/test_transposed_cast.py $R/tests/test_differentiable.py $R/tests/test_remat.py \
    $R/tests/test_nn.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" | sed "s|^|$R/|" > /tmp/ids.txt
  split -n r/8 -d /tmp/ids.txt /tmp/ids_
  for f in /tmp/ids_*; do
    ( mapfile -t c < $f; timeout -k 5 230 python -m pytest "${c[@]}" -q -rs -p no:cacheprovider > $OUT/logs/tests_${f##*_}.log 2>&1 ) &
  done; wait )
T tests
echo "tests: $(wc -l < /tmp/ids.txt) cases"; for f in $OUT/logs/tests*.log; do echo "$(basename $f): $(tail -1 $f)"; done
grep -h -E "^FAILED|^ERROR|^SKIPPED" $OUT/logs/tests*.log | head -20
side new timeout -k 5 90 python $P/transposed_cast.py "per token" 2>&1 | grep -v -i warning | tee $OUT/per_token.txt
T per token
for round in 1 2; do
  for s in old new; do
    side $s timeout -k 5 110 python $P/step_kernels.py mlp moe_x_bf16 > $OUT/steps_${s}_r$round.txt 2>&1
    T $s round $round
  done
done
for f in $OUT/steps_*.txt; do echo "== $f"; grep -E "us of kernels|jdg_|fusion" $f | head -14; done
tar czf $OUT/logs.tgz -C $OUT logs && rm -r $OUT/logs
