# Same-run A/B of two sets of kernel headers (cuda/), sourced by the A/B scripts: the package reads cuda/ at JIT
# time, so swapping the folder swaps the kernel (each side with its own kernel cache). Run from the repo root.
#   ab_setup                  $OUT, the environment, the build (log in $OUT/build.log), machine.txt; sets `start`
#   ab_prepare [OLD_DIR]      new = the working tree's cuda/, old = OLD_DIR (a copy sent along: the device copy's
#                             git history may lag, and did in session 17) or HEAD's; the difference goes to
#                             $OUT/ab_change.diff
#   ab_use new|old            put that side's headers in cuda/ (ab_use new when done)
#   ab_dense ROUNDS SHAPES    dense_rows.py on M,N,K shapes, new / old alternating, lines prefixed "side rR"
#   ab_grouped KINDS          grouped_rows.py once per side
#   ab_tests NAME ARGS...     pytest ARGS (with the headers in cuda/), log $OUT/tests_NAME.log, its summary printed
ab_setup() {
  OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
  export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
  start=$SECONDS
  python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
  { date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
}
ab_prepare() {
  rm -rf /tmp/ab_new_cuda /tmp/ab_old_cuda && cp -r cuda /tmp/ab_new_cuda
  if [ -n "${1:-}" ]; then cp -r "$1" /tmp/ab_old_cuda; else git checkout -q HEAD -- cuda && cp -r cuda /tmp/ab_old_cuda; fi
  rm -rf cuda && cp -r /tmp/ab_new_cuda cuda
  diff -r /tmp/ab_old_cuda /tmp/ab_new_cuda >"$OUT/ab_change.diff"
}
ab_use() { rm -rf cuda && cp -r "/tmp/ab_$1_cuda" cuda; }
ab_dense() {  # rounds, then the shapes as separate words
  local rounds=$1; shift
  for round in $(seq "$rounds"); do for v in new old; do
    ab_use $v
    DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 100 python benchmarks/experiments/dense_rows.py "$@" 2>&1 |
      grep -E " us |rror" | sed "s/^/$v r$round /"
  done; done
  ab_use new
}
ab_grouped() {  # the kinds grouped_rows.py takes
  for v in new old; do
    ab_use $v
    DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 120 python benchmarks/experiments/grouped_rows.py "$@" 2>&1 |
      grep -E " us |rror" | sed "s/^/$v /"
  done
  ab_use new
}
ab_tests() {  # name, pytest arguments
  local name=$1; shift
  timeout -k 5 "${JDG_TEST_LIMIT:-280}" python -I -m pytest "$@" -q -p no:cacheprovider >"$OUT/tests_$name.log" 2>&1
  echo "$name: $(grep -E "passed|failed" "$OUT/tests_$name.log" | tail -1)"; grep -E "^FAILED" "$OUT/tests_$name.log" | head -5
}
