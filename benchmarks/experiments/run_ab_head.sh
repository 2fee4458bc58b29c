#!/usr/bin/env bash
# Same-run A/B of an uncommitted kernel change: the working tree's kernel headers (cuda/) against HEAD's, on the
# dense M = 4096 rows, alternating new / old / new / old (separate kernel caches). Run from the repo root on the GPU
# machine after the build (the package reads cuda/ at JIT time, so swapping the headers swaps the kernel):
#   [AB_ROUNDS=2] bash benchmarks/experiments/run_ab_head.sh [extra bench args]
# AB_BASE=REV compares against REV's headers instead of HEAD's (a committed change: AB_BASE=HEAD~1). The device
# copy's git history may lag the working tree (session 12: its HEAD was the previous session's last commit): read
# ab_change.diff to see what was compared.
# With AB_GROUPED="KIND ..." (contiguous, masked, k_grouped) the grouped rows of those kinds instead (grouped_rows.py).
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
shapes=()
for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do shapes+=(--shape "4096,$nk"); done
git diff "${AB_BASE:-HEAD}" -- cuda >"$OUT/ab_change.diff"
rm -rf /tmp/ab_new_cuda && cp -r cuda /tmp/ab_new_cuda  # (a copy left by an earlier run would be stale)
bench() {  # label round [extra bench args]
  if [ -n "${AB_GROUPED:-}" ]; then
    # shellcheck disable=SC2086  # the kinds are words
    DG_JIT_CACHE_DIR="/tmp/ab_cache_$1" timeout -k 5 300 \
      python benchmarks/experiments/grouped_rows.py $AB_GROUPED 2>&1 |
      grep -E " us " | sed "s/^/$1 /"
    return
  fi
  DG_JIT_CACHE_DIR="/tmp/ab_cache_$1" timeout -k 5 150 python -m jax_deepgemm bench --only dense --iters 20 \
    --output "$OUT/ab_$1_$2.json" "${shapes[@]}" "${@:3}" 2>&1 | grep -E "^ +[0-9]" | sed "s/^/$1 /"
}
for round in $(seq "${AB_ROUNDS:-2}"); do
  rm -rf cuda && cp -r /tmp/ab_new_cuda cuda
  bench new "$round" "$@"
  git checkout -q "${AB_BASE:-HEAD}" -- cuda
  bench old "$round" "$@"
done
rm -rf cuda && cp -r /tmp/ab_new_cuda cuda
