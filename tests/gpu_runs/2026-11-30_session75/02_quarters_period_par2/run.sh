set -u
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
T build
DENSE="4096,7168,16384 4096,7168,2048"
P=benchmarks/experiments
side() { local s=$1; shift
  ( export DG_JIT_CACHE_DIR=/tmp/c_$s
    case $s in q*) export DG_TUNE_SPLIT_HALVES=1 DG_JIT_FFMA_YIELD_PERIOD=${s#q};; esac
    "$@" ) }
for s in new q8 q4 q0; do side $s python $P/dense_rows.py $DENSE > /dev/null 2>&1 & done; wait
T compiles
for round in 1 2; do for s in new q8 q4 q0; do
  side $s python $P/dense_rows.py $DENSE 2>&1 | sed "s/^/$s r$round /" >> $OUT/quarters_period.txt
done; done
cat $OUT/quarters_period.txt
T periods
git apply -R benchmarks/experiments/quarters.patch && git diff --stat | tail -1
OUT=$OUT timeout -k 5 400 bash tools/gpu_session.sh par 2 > $OUT/par2.txt 2>&1
tail -25 $OUT/par2.txt
T par2
