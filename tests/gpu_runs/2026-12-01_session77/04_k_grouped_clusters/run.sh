#!/usr/bin/env bash
# session 77, call 4: k-grouped GEMMs (FP32 out with C, and bf16 out without) in clusters (the picks) against the
# same tiles without (DG_TUNE_CLUSTER=1), HEAD's package, two rounds
set -u
cp .run4.sh "$OUT/run.sh"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/c4
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
T build
P=$PWD/benchmarks/experiments
SHAPES="4,4096,7168,8192 4,7168,2048,8192 8,4096,7168,4096 8,7168,2048,4096 8,4096,7168,2048 32,4096,7168,1024 8,28672,4096,4096 16,3072,2048,2048 4,2048,7168,8192"
KINDS=""; for s in $SHAPES; do KINDS="$KINDS k_grouped=$s k_grouped_bf16=$s"; done
run_variant() {  # pick | c1
  local env=(); [ $1 = c1 ] && env=(DG_TUNE_CLUSTER=1)
  ( cd /tmp && env "${env[@]}" PYTHONPATH=/tmp/pkg python $P/grouped_rows.py $KINDS 2>&1 | grep -E " us |rror" | sed "s/^/$1 /" )
}
mkdir -p $OUT/logs
for v in pick c1; do run_variant $v > $OUT/logs/warm_$v.txt & done; wait
T compiles
for round in 1 2; do
  for v in pick c1; do run_variant $v | sed "s/^/r$round /" >> $OUT/rows.txt; done
  T round $round
done
cat $OUT/rows.txt
tar czf $OUT/logs.tgz -C $OUT logs && rm -r $OUT/logs
