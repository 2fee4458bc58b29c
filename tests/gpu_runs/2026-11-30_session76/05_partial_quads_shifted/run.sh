#!/usr/bin/env bash
# session 76, call 5: partial-tile sends in 16-byte stores of registers 4j+1..4j+4 (the promotion's register parity) against e204c31's package
set -u
cp .run5.sh "$OUT/run.sh"; git diff > "$OUT/change.diff"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
R=$PWD
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_new . > $OUT/build_new.log 2>&1 || { tail -30 $OUT/build_new.log; exit 1; } &
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_old .abtrees/e204c31 > $OUT/build_old.log 2>&1 || echo old build failed &
wait
T build
DENSE="64,2112,7168 128,2112,7168 128,4096,7168 4096,7168,16384"
GROUPED="masked masked=8,256,4096,7168 masked=4,512,7168,4096"
DIGEST="$DENSE masked=1,1024,4096,7168 masked=2,512,4096,7168 masked=4,256,4096,7168 masked=8,256,4096,7168 masked=1,1024,7168,2048"
P=$R/benchmarks/experiments
mkdir -p $OUT/logs
cd /tmp
side() {  # side name, command (run from /tmp with that side's package and kernel cache)
  local s=$1; shift
  ( export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_$s
    python -c "import jax_deepgemm as j; assert j.__file__.startswith('$PYTHONPATH'), j.__file__" || exit 1
    "$@" )
}
( export DG_JIT_CACHE_DIR=/tmp/ctests PYTHONPATH=/tmp/pkg_new
  python -m pytest $R/tests/test_gpu_configs.py $R/tests/test_gpu_grouped.py $R/tests/test_gpu_dense.py --collect-only -q \
    -p no:cacheprovider -k "tail_split or split_k or masked" 2>/dev/null | grep "::" | sed "s|^|$R/|" > /tmp/ids.txt
  split -n r/10 -d /tmp/ids.txt /tmp/ids_
  for f in /tmp/ids_*; do
    ( mapfile -t c < $f; timeout -k 5 330 python -m pytest "${c[@]}" -q -rs -p no:cacheprovider > $OUT/logs/tests_${f##*_}.log 2>&1 ) &
  done; wait ) &
for s in old new; do
  side $s bash -c "python $P/output_digest.py $DIGEST > $OUT/logs/digest_$s.txt 2>$OUT/logs/digest_$s.err; python $P/grouped_rows.py $GROUPED > /dev/null 2>&1; python $P/dense_rows.py $DENSE > /dev/null 2>&1" &
done
wait
T tests and compiles
echo "tests: $(wc -l < /tmp/ids.txt) cases"; for f in $OUT/logs/tests*.log; do echo "$(basename $f): $(tail -1 $f)"; done
grep -h -E "^FAILED|^ERROR" $OUT/logs/tests*.log | head -20
cmp -s $OUT/logs/digest_new.txt $OUT/logs/digest_old.txt && echo "digests: bit-identical" || { echo "DIGESTS DIFFER"; paste $OUT/logs/digest_old.txt $OUT/logs/digest_new.txt; }
for round in 1 2; do
  for s in old new; do
    side $s bash -c "python $P/dense_rows.py $DENSE 2>&1 | sed 's/^/$s r$round /' >> $OUT/dense.txt
      python $P/grouped_rows.py $GROUPED 2>&1 | grep ' us ' | sed 's/^/$s r$round /' >> $OUT/grouped.txt
      python $P/masked_draws.py 4 1x1024x4096x7168 2x512x4096x7168 4x256x4096x7168 2>&1 | sed 's/^/$s r$round /' >> $OUT/draws.txt"
  done
  T round $round
done
tar czf $OUT/logs.tgz -C $OUT logs && rm -r $OUT/logs
