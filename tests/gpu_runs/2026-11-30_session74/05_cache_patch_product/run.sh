set -u
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s)
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
DENSE="4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,32768,512 4096,24576,1536 4096,2112,7168 128,7168,16384 2048,2112,7168"
DIG="$DENSE contiguous=4,8192,4096,7168 contiguous=4,8192,7168,2048"
P=benchmarks/experiments
export DG_JIT_CACHE_DIR=/tmp/c0
python $P/output_digest.py $DIG > $OUT/digest_c0.txt 2>&1
python $P/dense_rows.py $DENSE > $OUT/warm_dense.txt 2>&1
python $P/grouped_rows.py contiguous > $OUT/warm_grouped.txt 2>&1
echo "warm $(( $(date +%s) - t0 )) s; entries $(ls /tmp/c0/cache | wc -l)"
for p in 3 4; do
  cp -a /tmp/c0 /tmp/c$p && python $P/ffma_reuse_patch.py --cache /tmp/c$p --mode $p > $OUT/patch_c$p.txt
  DG_JIT_CACHE_DIR=/tmp/c$p python $P/output_digest.py $DIG > $OUT/digest_c$p.txt 2>&1
  cmp $OUT/digest_c0.txt $OUT/digest_c$p.txt && echo "c$p: outputs bit-identical to c0"
done
for round in 1 2; do
  for c in c0 c4 c3; do
    DG_JIT_CACHE_DIR=/tmp/$c python $P/dense_rows.py $DENSE 2>&1 | sed "s/^/$c r$round /" | tee -a $OUT/dense.txt
  done
  echo "t $(( $(date +%s) - t0 )) s"
  for c in c0 c4; do
    DG_JIT_CACHE_DIR=/tmp/$c python $P/grouped_rows.py contiguous 2>&1 | sed "s/^/$c r$round /" | tee -a $OUT/grouped.txt
  done
  echo "t $(( $(date +%s) - t0 )) s"
done
for c in c0 c3 c4; do echo "$c entries $(ls /tmp/$c/cache | wc -l)"; done
