set -u
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
T build
DENSE="4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,2112,7168 128,7168,16384"
P=benchmarks/experiments
mkdir -p $OUT/logs
( export DG_JIT_CACHE_DIR=/tmp/ctests
  python -I -m pytest tests/test_gpu_dense.py tests/test_gpu_grouped.py tests/test_sass_hints.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" > /tmp/ids.txt
  split -n r/10 -d /tmp/ids.txt /tmp/ids_
  for f in /tmp/ids_*; do
    ( mapfile -t cases < $f; timeout -k 5 200 python -I -m pytest "${cases[@]}" -q -rs -p no:cacheprovider > $OUT/logs/tests_${f##*_}.log 2>&1 ) &
  done; wait ) &
for p in 0 default; do
  ( export DG_JIT_CACHE_DIR=/tmp/c$p; [ $p = 0 ] && export DG_JIT_FFMA_YIELD_PERIOD=0
    python $P/output_digest.py $DENSE contiguous=4,8192,4096,7168 > $OUT/logs/digest_$p.txt 2>&1
    python $P/grouped_rows.py masked=1,1024,4096,7168 masked=2,512,7168,2048 contiguous=4,8192,4096,7168 > /dev/null 2>&1 ) &
done
wait
T tests and compiles
echo "tests: $(wc -l < /tmp/ids.txt) cases"; for f in $OUT/logs/tests_*.log; do tail -1 $f; done
grep -h -E "^FAILED|^ERROR" $OUT/logs/tests_*.log | head
cmp -s $OUT/logs/digest_0.txt $OUT/logs/digest_default.txt && echo "default: outputs bit-identical to period 0" || echo "OUTPUTS DIFFER"
for round in 1 2; do
  for p in 0 default; do
    ( export DG_JIT_CACHE_DIR=/tmp/c$p; [ $p = 0 ] && export DG_JIT_FFMA_YIELD_PERIOD=0
      python $P/dense_rows.py $DENSE 2>&1 | sed "s/^/$p r$round /" >> $OUT/dense.txt
      python $P/grouped_rows.py masked=1,1024,4096,7168 masked=2,512,7168,2048 contiguous=4,8192,4096,7168 2>&1 |
        sed "s/^/$p r$round /" >> $OUT/grouped.txt )
  done
  T round $round
done
tar czf $OUT/logs.tgz -C $OUT logs && rm -r $OUT/logs
