#!/usr/bin/env bash
# Whole-package A/B across commits in one device call (NOTES 116): the tree as sent against the package at earlier
# commits, each built into its own folder (pip --target: no editable install, whose import hook would win over
# PYTHONPATH), the sides alternating per round, each running its own commit's dense_rows.py and grouped_rows.py with
# its own kernel cache. For telling a kernel regression from another machine's speed: tables of different calls have
# differed by up to 4% on unchanged kernels (NOTES 116).
#   here:    bash benchmarks/experiments/package_ab.sh prepare REV...   git archive of each REV into .abtrees/REV
#   device:  bash benchmarks/experiments/package_ab.sh run [ROUNDS]     with carry [".abtrees"]; logs in $OUT
# AB_DENSE: dense_rows.py's M,N,K shapes; AB_GROUPED: grouped_rows.py's kinds (as both commits' scripts take them).
set -uo pipefail
files=(CMakeLists.txt pyproject.toml README.md ffi cuda jax_deepgemm benchmarks/experiments/dense_rows.py
       benchmarks/experiments/grouped_rows.py)
case "${1:-}" in
  prepare)
    shift
    for rev in "$@"; do
      rm -rf ".abtrees/$rev" && mkdir -p ".abtrees/$rev"
      git archive "$rev" "${files[@]}" | tar -x -C ".abtrees/$rev" || exit 1
    done
    ;;
  run)
    OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
    export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
    root=$PWD
    { date -u; nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader; } | tee "$OUT/machine.txt"
    rm -rf /tmp/ab_tree_head && mkdir -p /tmp/ab_tree_head && tar -c "${files[@]}" | tar -x -C /tmp/ab_tree_head
    trees=(/tmp/ab_tree_head "$root"/.abtrees/*)
    for tree in "${trees[@]}"; do
      name=${tree##*/}; name=${name#ab_tree_}
      python -m pip install -q --no-build-isolation --no-deps --target "/tmp/ab_pkg_$name" "$tree" \
        >"$OUT/build_$name.log" 2>&1 || echo "build of $name failed: $OUT/build_$name.log" &
    done
    wait
    dense=${AB_DENSE:-4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,2112,7168 4096,24576,1536}
    grouped=${AB_GROUPED:-contiguous=4,8192,4096,7168 k_grouped}
    for round in $(seq "${2:-3}"); do
      for tree in "${trees[@]}"; do
        name=${tree##*/}; name=${name#ab_tree_}
        # (from /tmp: the working tree's jax_deepgemm/ must not be the one imported)
        # shellcheck disable=SC2086  # the shapes and kinds are word lists
        (cd /tmp && export PYTHONPATH="/tmp/ab_pkg_$name" DG_JIT_CACHE_DIR="/tmp/ab_cache_$name" &&
          python -c "import jax_deepgemm as j; assert j.__file__.startswith('$PYTHONPATH'), j.__file__" &&
          timeout -k 5 150 python "$tree/benchmarks/experiments/dense_rows.py" $dense &&
          timeout -k 5 200 python "$tree/benchmarks/experiments/grouped_rows.py" $grouped) 2>&1 |
          grep -E " us |rror" | sed "s/^/$name r$round /"
      done
    done | tee "$OUT/rows.txt"
    ;;
  *) echo "usage: $0 prepare REV... | run [ROUNDS]"; exit 2 ;;
esac
