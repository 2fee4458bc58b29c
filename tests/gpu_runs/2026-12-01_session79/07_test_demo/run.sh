#!/usr/bin/env bash
# The scale-transpose test (fixed at 45f3d1f) with 77b564e's package (scales [columns, row blocks]: it should fail) and
# HEAD's; then the demo with 3e026be's package (before this session's changes) and HEAD's, one after the other.
set -u
OUT="${OUT:-./gpu-out}"
export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
R=$PWD
python -m pip uninstall -y -q jax_deepgemm > /dev/null 2>&1
pip_target() { python -m pip install -q --no-build-isolation --no-deps --target "$@"; }
pip_target /tmp/pkg_new . > /tmp/build_new.log 2>&1 &
pip_target /tmp/pkg_mid .abtrees/77b564e > /tmp/build_mid.log 2>&1 &
pip_target /tmp/pkg_old .abtrees/3e026be > /tmp/build_old.log 2>&1 &
wait
side() {  # side, then a command run with that package first on the path
  local s=$1; shift
  ( cd /tmp; export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_$s
    python -c "import jax_deepgemm as j; assert j.__file__.startswith('/tmp/pkg_$s'), j.__file__" || exit 1
    "$@" )
}
for s in mid new; do
  side $s timeout -k 5 120 python -m pytest $R/tests/test_transposed_cast.py -k reach_the_gemms -q -p no:cacheprovider \
    2>&1 | grep -E "passed|failed|scale_moves|AssertionError" | head -5 | sed "s/^/$s test: /" | tee -a "$OUT/test_ab.txt"
done
export XLA_PYTHON_CLIENT_PREALLOCATE=false
for s in old new; do
  side $s timeout -k 5 200 python -m jax_deepgemm demo 2>&1 | grep -v -E "^E[0-9]{4}|^W[0-9]{4}" | sed "s/^/$s /" |
    tee -a "$OUT/demo.txt"
done
