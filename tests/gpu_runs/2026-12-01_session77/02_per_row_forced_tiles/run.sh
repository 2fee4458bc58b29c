#!/usr/bin/env bash
# session 77, call 2: dense GEMMs with 1x128 B scales (the weight gradients' kind): the heuristics' pick against
# forced tiles and clusters, HEAD's package
set -u
cp .run2.sh "$OUT/run.sh"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/c2
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
T build
P=$PWD/benchmarks/experiments
SHAPES="7168,2048,4096 7168,2048,8192 2048,7168,4096 4096,7168,8192 18432,7168,4096"
VARIANTS="pick M256_N128_C1 M256_N128_C2 M256_N96_C1 M256_N96_C2 M128_N128_C1 M128_N176_C1 M128_N160_C2 M256_N64_C2"
run_variant() {  # variant name, then dense_rows.py's output with the variant's name in front
  local v=$1 env=()
  if [ "$v" != pick ]; then IFS=_ read -r m n c <<< "$v"; env=(DG_TUNE_BLOCK_M=${m#M} DG_TUNE_BLOCK_N=${n#N} DG_TUNE_CLUSTER=${c#C}); fi
  ( cd /tmp && env "${env[@]}" PYTHONPATH=/tmp/pkg python $P/dense_rows.py b=rows $SHAPES 2>&1 | sed "s/^/$v /" )
}
mkdir -p $OUT/logs
for v in $VARIANTS; do run_variant $v > $OUT/logs/compile_$v.txt & done; wait
T compiles
grep -h -i -E "error|Traceback" $OUT/logs/compile_*.txt | head
for round in 1 2; do
  for v in $VARIANTS; do run_variant $v | sed "s/^/r$round /" >> $OUT/rows.txt; done
  T round $round
done
sort -k3,5 -k2 $OUT/rows.txt | awk '{print}' > $OUT/rows_sorted.txt
cat $OUT/rows_sorted.txt
tar czf $OUT/logs.tgz -C $OUT logs && rm -r $OUT/logs
