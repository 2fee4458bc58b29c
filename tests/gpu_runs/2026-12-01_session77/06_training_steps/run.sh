#!/usr/bin/env bash
# session 77, call 6: the demo's MoE layer (bf16 weights, x differentiated: moe_x_bf16 if present, else moe_bf16) and
# the MLP step, kernel by kernel, with step 17 against a88d50c's package, two rounds
set -u
cp .run6.sh "$OUT/run.sh"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
R=$PWD
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_new . > $OUT/build_new.log 2>&1 || { tail -30 $OUT/build_new.log; exit 1; } &
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_old .abtrees/a88d50c > $OUT/build_old.log 2>&1 || echo old build failed &
wait
T build
cd $R/benchmarks/experiments
for round in 1 2; do
  for s in old new; do
    ( export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_$s:$R/benchmarks/experiments
      timeout -k 5 150 python step_kernels.py moe_bf16 mlp > $OUT/${s}_r$round.txt 2>&1 )
    T $s round $round
  done
done
for f in $OUT/*_r*.txt; do echo "== $f"; grep -v -i "warning" $f | head -40; done
