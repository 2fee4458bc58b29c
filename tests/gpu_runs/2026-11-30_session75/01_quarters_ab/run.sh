set -u
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
R=$PWD
# both packages with --target (an editable install's import hook would win over PYTHONPATH)
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_new . > $OUT/build_new.log 2>&1 || { tail -30 $OUT/build_new.log; exit 1; } &
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_old .abtrees/e204c31 > $OUT/build_old.log 2>&1 || echo old build failed &
wait
T build
DENSE="4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,24576,1536 4096,32768,512 4096,2112,7168"
GROUPED="masked=1,1024,4096,7168 masked=2,512,4096,7168 contiguous=4,8192,4096,7168"
P=$R/benchmarks/experiments
mkdir -p $OUT/logs
cd /tmp
side() {  # side name, command (run from /tmp with that side's package and kernel cache)
  local s=$1; shift
  ( export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_new
    case $s in old) export PYTHONPATH=/tmp/pkg_old;; q) export DG_TUNE_SPLIT_HALVES=1;; esac
    python -c "import jax_deepgemm as j; assert j.__file__.startswith('$PYTHONPATH'), j.__file__" || exit 1
    "$@" )
}
( export DG_JIT_CACHE_DIR=/tmp/ctests PYTHONPATH=/tmp/pkg_new
  { python -m pytest $R/tests/test_gpu_configs.py -k split_halves --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::"
    python -m pytest $R/tests/test_gpu_dense.py $R/tests/test_gpu_grouped.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" | sed 's/^/Q /'; } > /tmp/ids.txt
  split -n r/10 -d /tmp/ids.txt /tmp/ids_
  for f in /tmp/ids_*; do
    ( mapfile -t all < $f; plain=(); q=()
      for c in "${all[@]}"; do case $c in "Q "*) q+=("${c#Q }");; *) plain+=("$c");; esac; done
      [ ${#plain[@]} -gt 0 ] && timeout -k 5 300 python -m pytest "${plain[@]}" -q -rs -p no:cacheprovider > $OUT/logs/tests_${f##*_}.log 2>&1
      [ ${#q[@]} -gt 0 ] && DG_TUNE_SPLIT_HALVES=1 timeout -k 5 300 python -m pytest "${q[@]}" -q -rs -p no:cacheprovider > $OUT/logs/testsq_${f##*_}.log 2>&1 ) &
  done; wait ) &
for s in old new q; do
  side $s bash -c "DG_PRINT_CONFIGS=1 python $P/output_digest.py $DENSE contiguous=4,8192,4096,7168 > $OUT/logs/digest_$s.txt 2>$OUT/logs/digest_$s.err; python $P/grouped_rows.py $GROUPED > /dev/null 2>&1; python $P/dense_rows.py $DENSE > /dev/null 2>&1" &
done
wait
T tests and compiles
echo "tests: $(wc -l < /tmp/ids.txt) cases"; for f in $OUT/logs/tests*.log; do echo "$(basename $f): $(tail -1 $f)"; done
grep -h -E "^FAILED|^ERROR" $OUT/logs/tests*.log | head -20
for s in old q; do cmp -s $OUT/logs/digest_new.txt $OUT/logs/digest_$s.txt && echo "$s: outputs bit-identical to new" || echo "$s: OUTPUTS DIFFER"; done
grep -h "jax_deepgemm: " $OUT/logs/digest_*.err | sort | uniq -c | head -30
for round in 1 2; do
  for s in old new q; do
    side $s bash -c "python $P/dense_rows.py $DENSE 2>&1 | sed 's/^/$s r$round /' >> $OUT/dense.txt
      python $P/grouped_rows.py $GROUPED 2>&1 | grep ' us ' | sed 's/^/$s r$round /' >> $OUT/grouped.txt"
  done
  T round $round
done
tar czf $OUT/logs.tgz -C $OUT logs && rm -r $OUT/logs
