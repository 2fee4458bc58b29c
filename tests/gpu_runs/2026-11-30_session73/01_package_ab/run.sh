#!/usr/bin/env bash
# Whole-package A/B in one call: HEAD against 09cf7da (session 43's table) and 1692afe (session 63's), each built
# into its own folder (no editable install), the sides alternating per round.
set -uo pipefail
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
root=$PWD
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv; } | tee "$OUT/machine.txt"
build() { python -m pip install -q --no-build-isolation --no-deps --target "/tmp/pkg_$1" "$2" >"$OUT/build_$1.log" 2>&1 || { echo "build $1 failed"; tail -20 "$OUT/build_$1.log"; }; }
rm -rf abtrees/head && mkdir -p abtrees/head && cp -r CMakeLists.txt pyproject.toml README.md ffi cuda jax_deepgemm abtrees/head/ && mkdir -p abtrees/head/benchmarks && cp -r benchmarks/experiments abtrees/head/benchmarks/
build head abtrees/head & build s43 abtrees/09cf7da & build s63 abtrees/1692afe & wait
echo "built in $SECONDS s"
side() {  # name tree
  local name=$1 tree=$root/$2
  cd /tmp || exit 1
  PYTHONPATH=/tmp/pkg_$name python -c "import jax_deepgemm; assert jax_deepgemm.__file__.startswith('/tmp/pkg_$name'), jax_deepgemm.__file__" || return
  PYTHONPATH=/tmp/pkg_$name DG_JIT_CACHE_DIR=/tmp/cache_$name timeout -k 5 150 python "$tree/benchmarks/experiments/dense_rows.py" 4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,2112,7168 4096,24576,1536 2>&1 | grep -E " us |rror" | sed "s/^/$name r$r dense /"
  PYTHONPATH=/tmp/pkg_$name DG_JIT_CACHE_DIR=/tmp/cache_$name timeout -k 5 200 python "$tree/benchmarks/experiments/grouped_rows.py" contiguous=4,8192,4096,7168 k_grouped 2>&1 | grep -E " us |rror" | sed "s/^/$name r$r grouped /"
  cd "$root" || exit 1
}
for r in 1 2 3; do
  side head abtrees/head; side s43 abtrees/09cf7da; side s63 abtrees/1692afe
  echo "round $r done at $SECONDS s"
  [ $SECONDS -gt 430 ] && break
done 2>&1 | tee "$OUT/rows.txt"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv | tee -a "$OUT/machine.txt"
