#!/usr/bin/env bash
# session 77, call 7: contiguous and ragged table rows (256-row tiles in clusters of 2, the picks) against the same
# tiles without clusters (DG_TUNE_CLUSTER=1), HEAD's package, two rounds
set -u
cp .run7.sh "$OUT/run.sh"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/c7
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
T build
P=$PWD/benchmarks/experiments
run_variant() {  # pick | c1
  local env=(); [ $1 = c1 ] && env=(DG_TUNE_CLUSTER=1)
  ( cd /tmp && env "${env[@]}" PYTHONPATH=/tmp/pkg timeout -k 5 100 python $P/grouped_rows.py contiguous 2>&1 | grep -E " us |rror" | sed "s/^/$1 /" )
}
for v in pick c1; do run_variant $v > $OUT/warm_$v.txt & done; wait
T compiles
for round in 1 2; do
  for v in pick c1; do run_variant $v | sed "s/^/r$round /" >> $OUT/rows.txt; done
  T round $round
done
cat $OUT/rows.txt
