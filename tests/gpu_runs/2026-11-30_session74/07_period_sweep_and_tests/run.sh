set -u
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
T build
DENSE="4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,32768,512 4096,24576,1536 4096,2112,7168 2048,2112,7168 128,7168,16384"
DIG="$DENSE contiguous=4,8192,4096,7168 contiguous=4,8192,7168,2048"
P=benchmarks/experiments
mkdir -p $OUT/logs
# the GPU tests of the dense and grouped kernels with the default period (8), in 10 processes
( export DG_JIT_CACHE_DIR=/tmp/ctests
  python -I -m pytest tests/test_gpu_dense.py tests/test_gpu_grouped.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" > /tmp/ids.txt
  split -n r/10 -d /tmp/ids.txt /tmp/ids_
  for f in /tmp/ids_*; do
    ( mapfile -t cases < $f; timeout -k 5 250 python -I -m pytest "${cases[@]}" -q -rs -p no:cacheprovider > $OUT/logs/tests_${f##*_}.log 2>&1 ) &
  done; wait ) &
tests=$!
for p in 0 8 12 16 32; do
  ( export DG_JIT_CACHE_DIR=/tmp/c$p DG_JIT_FFMA_YIELD_PERIOD=$p
    python $P/output_digest.py $DIG > $OUT/logs/digest_p$p.txt 2>&1
    python $P/grouped_rows.py masked contiguous=4,8192,4096,7168 > /dev/null 2>&1 ) &
done
wait
T tests and compiles
echo "tests: $(cat /tmp/ids.txt | wc -l) cases"; for f in $OUT/logs/tests_*.log; do tail -1 $f; done
grep -h -E "^FAILED|^ERROR" $OUT/logs/tests_*.log | head
for p in 8 12 16 32; do cmp -s $OUT/logs/digest_p0.txt $OUT/logs/digest_p$p.txt && echo "period $p: outputs bit-identical to period 0" || echo "period $p: OUTPUTS DIFFER"; done
for round in 1 2; do
  for p in 0 8 16 12 32; do
    DG_JIT_CACHE_DIR=/tmp/c$p DG_JIT_FFMA_YIELD_PERIOD=$p python $P/dense_rows.py $DENSE 2>&1 | sed "s/^/p$p r$round /" >> $OUT/dense.txt
  done
  T dense $round
done
for p in 0 8 16 12 32; do
  DG_JIT_CACHE_DIR=/tmp/c$p DG_JIT_FFMA_YIELD_PERIOD=$p python $P/grouped_rows.py masked contiguous=4,8192,4096,7168 2>&1 |
    sed "s/^/p$p /" >> $OUT/grouped.txt
done
T grouped
tar czf $OUT/logs.tgz -C $OUT logs && rm -r $OUT/logs
