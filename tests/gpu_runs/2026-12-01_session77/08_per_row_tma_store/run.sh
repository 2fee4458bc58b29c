#!/usr/bin/env bash
# session 77, call 8: dense GEMMs with per-row B scales, bf16 out: the picks (TMA store, 3 stages) against the register
# epilogue with a 4th stage (DG_TUNE_TMA_STORE=0), HEAD's package, two rounds
set -u
cp .run8.sh "$OUT/run.sh"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/c8
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
T build
P=$PWD/benchmarks/experiments
SHAPES="4096,7168,16384 7168,2048,16384 18432,7168,16384 4096,7168,8192 7168,2048,4096 2048,7168,4096"
run_variant() {  # pick | no_tma
  local env=(); [ $1 = no_tma ] && env=(DG_TUNE_TMA_STORE=0)
  ( cd /tmp && env "${env[@]}" PYTHONPATH=/tmp/pkg timeout -k 5 100 python $P/dense_rows.py b=rows $SHAPES 2>&1 | grep -E " us |rror" | sed "s/^/$1 /" )
}
for v in pick no_tma; do run_variant $v > $OUT/warm_$v.txt & done; wait
T compiles
for round in 1 2; do
  for v in pick no_tma; do run_variant $v | sed "s/^/r$round /" >> $OUT/rows.txt; done
  T round $round
done
sort -k3,5 -k2 $OUT/rows.txt
