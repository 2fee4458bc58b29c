#!/usr/bin/env bash
# session 77, call 5: heuristics step 17's k-grouped part (tiles with the TMA store, bf16 out over short K, take no
# clusters) against a88d50c's package: bf16 rows it changes, one unchanged control, the k-grouped GPU tests
set -u
cp .run5.sh "$OUT/run.sh"; git diff a88d50c -- ffi > "$OUT/change.diff"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
R=$PWD
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_new . > $OUT/build_new.log 2>&1 || { tail -30 $OUT/build_new.log; exit 1; } &
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_old .abtrees/a88d50c > $OUT/build_old.log 2>&1 || echo old build failed &
wait
T build
KINDS="k_grouped_bf16=8,4096,7168,2048 k_grouped_bf16=32,4096,7168,1024 k_grouped_bf16=16,3072,2048,2048 k_grouped_bf16=64,2048,7168,512 k_grouped_bf16=16,4096,1536,1024 k_grouped_bf16=32,7168,2048,512 k_grouped_bf16=8,28672,4096,2048 k_grouped=4,4096,7168,8192"
P=$R/benchmarks/experiments
mkdir -p $OUT/logs
cd /tmp
side() {
  local s=$1; shift
  ( export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_$s
    python -c "import jax_deepgemm as j; assert j.__file__.startswith('$PYTHONPATH'), j.__file__" || exit 1
    "$@" )
}
( export DG_JIT_CACHE_DIR=/tmp/ctests PYTHONPATH=/tmp/pkg_new
  python -m pytest $R/tests/test_gpu_configs.py $R/tests/test_gpu_grouped.py --collect-only -q -p no:cacheprovider \
    -k "k_grouped" 2>/dev/null | grep "::" | sed "s|^|$R/|" > /tmp/ids.txt
  split -n r/8 -d /tmp/ids.txt /tmp/ids_
  for f in /tmp/ids_*; do
    ( mapfile -t c < $f; timeout -k 5 240 python -m pytest "${c[@]}" -q -rs -p no:cacheprovider > $OUT/logs/tests_${f##*_}.log 2>&1 ) &
  done; wait ) &
for s in old new; do side $s bash -c "python $P/grouped_rows.py $KINDS > /dev/null 2>&1" & done
wait
T tests and compiles
echo "tests: $(wc -l < /tmp/ids.txt) cases"; for f in $OUT/logs/tests*.log; do echo "$(basename $f): $(tail -1 $f)"; done
grep -h -E "^FAILED|^ERROR" $OUT/logs/tests*.log | head -20
for round in 1 2; do
  for s in old new; do side $s bash -c "python $P/grouped_rows.py $KINDS 2>&1 | grep ' us ' | sed 's/^/$s r$round /' >> $OUT/rows.txt"; done
  T round $round
done
cat $OUT/rows.txt
tar czf $OUT/logs.tgz -C $OUT logs && rm -r $OUT/logs
