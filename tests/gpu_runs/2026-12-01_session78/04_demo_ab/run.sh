#!/usr/bin/env bash
# session 78, call 4: the demo with 7c6b14f's package (XLA's per-token quantizations) and with HEAD's (the rowwise
# kernel), one after the other in one call
set -u
cp .run4.sh "$OUT/run.sh"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
R=$PWD
python -m pip uninstall -y -q jax_deepgemm > /dev/null 2>&1  # (call 3's editable install would shadow PYTHONPATH)
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_new . > /tmp/build_new.log 2>&1 || { tail -30 /tmp/build_new.log; exit 1; } &
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_old .abtrees/7c6b14f > /tmp/build_old.log 2>&1 || echo old build failed &
wait
T build
for s in old new; do
  ( cd /tmp; export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_$s
    python -c "import jax_deepgemm as j; assert j.__file__.startswith('/tmp/pkg_$s'), j.__file__" || exit 1
    timeout -k 5 230 python -m jax_deepgemm demo 2>&1 | grep -v -E "^E[0-9]{4}|^W[0-9]{4}" | sed "s/^/$s /" ) | tee -a $OUT/demo.txt
  T demo $s
done
