#!/usr/bin/env bash
# session 77, call 3: heuristics step 17 (dense GEMMs with per-row B scales take no clusters on aligned rows) against
# a88d50c's package: the rows whose pick it changes, bf16 / f32 out / f32 C, and the GPU tests of those kernels
set -u
cp .run3.sh "$OUT/run.sh"; git diff > "$OUT/change.diff"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
R=$PWD
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_new . > $OUT/build_new.log 2>&1 || { tail -30 $OUT/build_new.log; exit 1; } &
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_old .abtrees/a88d50c > $OUT/build_old.log 2>&1 || echo old build failed &
wait
T build
BF16="7168,2048,4096 2048,7168,4096 4096,18432,4096 7168,1536,8192 4096,1536,8192 4096,7168,16384 7168,2048,16384 18432,7168,16384 4096,7168,8192"
F32="7168,2048,4096 2048,7168,8192 4096,7168,16384"
P=$R/benchmarks/experiments
mkdir -p $OUT/logs
cd /tmp
side() {  # side name, command (run from /tmp with that side's package and kernel cache)
  local s=$1; shift
  ( export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_$s
    python -c "import jax_deepgemm as j; assert j.__file__.startswith('$PYTHONPATH'), j.__file__" || exit 1
    "$@" )
}
rows() {  # side, round tag
  side $1 bash -c "python $P/dense_rows.py b=rows $BF16; python $P/dense_rows.py b=rows out=f32 $F32; python $P/dense_rows.py b=rows c=f32 $F32" 2>&1 | grep -E " us |rror" | sed "s/^/$1 $2 /"
}
( export DG_JIT_CACHE_DIR=/tmp/ctests PYTHONPATH=/tmp/pkg_new
  { python -m pytest $R/tests/test_gpu_configs.py $R/tests/test_gpu_dense.py --collect-only -q -p no:cacheprovider \
      -k "per_row" 2>/dev/null; python -m pytest $R/tests/test_differentiable.py --collect-only -q -p no:cacheprovider 2>/dev/null; } |
    grep "::" | sed "s|^|$R/|" > /tmp/ids.txt
  split -n r/10 -d /tmp/ids.txt /tmp/ids_
  for f in /tmp/ids_*; do
    ( mapfile -t c < $f; timeout -k 5 300 python -m pytest "${c[@]}" -q -rs -p no:cacheprovider > $OUT/logs/tests_${f##*_}.log 2>&1 ) &
  done; wait ) &
for s in old new; do rows $s r0 > $OUT/logs/warm_$s.txt & done
wait
T tests and compiles
echo "tests: $(wc -l < /tmp/ids.txt) cases"; for f in $OUT/logs/tests*.log; do echo "$(basename $f): $(tail -1 $f)"; done
grep -h -E "^FAILED|^ERROR" $OUT/logs/tests*.log | head -20
for round in 1 2; do
  for s in old new; do rows $s r$round >> $OUT/rows.txt; done
  T round $round
done
sort -k3,6 -k1,2 $OUT/rows.txt
tar czf $OUT/logs.tgz -C $OUT logs && rm -r $OUT/logs
