# Same-call A/B of two package trees on the GPU machine (source it from a run script, in the repository root):
#   ab_install NAME TREE ...   pip-installs each TREE (".", or .abtrees/<commit>: git archive of a commit, carried)
#                              into /tmp/pkg_NAME, in parallel, logs under $OUT/logs (the editable install removed
#                              first, so that only the chosen package can be imported)
#   side NAME CMD ...          runs CMD from /tmp with /tmp/pkg_NAME first on PYTHONPATH (and benchmarks/experiments
#                              after it), its own JIT cache; fails if another jax_deepgemm is imported
#   sent_tree DIR              copies the sent tree's package sources (not tests/, benchmarks/) to DIR: the "old"
#                              side of a script that patches the tree (not `git archive HEAD`: the device copy's
#                              git HEAD is the session's first commit, not the sent tree's; session 84)
# Scripts name files by absolute path: $R is the repository root.
R=$PWD
sent_tree() {
  mkdir -p "$1"
  git ls-files -co --exclude-standard | grep -vE "^(tests|benchmarks)/" |
    while read -r f; do [ -f "$f" ] && echo "$f"; done | tar -cf - -T - | tar -xf - -C "$1"
}
ab_install() {
  python -m pip uninstall -y -q jax_deepgemm >/dev/null 2>&1
  mkdir -p "$OUT/logs"
  while [ $# -ge 2 ]; do
    python -m pip install -q --no-build-isolation --no-deps --target "/tmp/pkg_$1" "$2" >"$OUT/logs/build_$1.log" 2>&1 &
    shift 2
  done
  wait
}
side() {
  local s=$1; shift
  ( cd /tmp || exit 1
    export DG_JIT_CACHE_DIR=/tmp/c_$s PYTHONPATH=/tmp/pkg_$s:$R/benchmarks/experiments
    python -c "import jax_deepgemm as j; assert j.__file__.startswith('/tmp/pkg_$s'), j.__file__" || exit 1
    "$@" )
}
# `step_rounds OLD NEW STEP`: benchmarks/experiments/step_kernels.py STEP with each side's package, two rounds, the
# sides alternating; its kernel lines to $OUT/steps.txt (prefixed "SIDE rROUND"), the totals printed.
step_rounds() {
  local round s
  for round in 1 2; do
    for s in "$1" "$2"; do
      side "$s" timeout -k 5 150 python "$R/benchmarks/experiments/step_kernels.py" "$3" 2>&1 | grep -v -i warning |
        grep -E "us of kernels|jdg_|fusion" | sed "s/^/$s r$round /" >> "$OUT/steps.txt"
    done
  done
  grep -E "us of kernels" "$OUT/steps.txt"
}
