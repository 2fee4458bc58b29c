#!/usr/bin/env bash
# NOTES 17's next experiment: clusters of 2 (A multicast) for odd N-block counts (odd_n_clusters.patch: the last N
# block pairs with one wholly past N that stores nothing; forced clusters take it, the default still only pairs
# even counts). 256 x 64 tiles on N = 2112 copy 320 rows per K block (~900 cycles at 2.8 per row, measured 992),
# multicast 192: prediction 4096 x 2112 x 7168 140 -> 100-115 us if the chip-wide L2 rate limits it, ~131 if each
# SM's receive rate does (benchmarks/NOTES.md 17). Two device calls, from the repo root:
#   bash benchmarks/experiments/run_odd_n_clusters.sh perf    build; same-run bench of odd-N shapes, clusters 1 / 2;
#                                                              forced-cluster GPU config tests of the odd-N paths
#   JDG_PAR_LIMIT=480 bash benchmarks/experiments/run_odd_n_clusters.sh tests   every GPU test file (gpu_session.sh par)
# cuda/, ffi/ and tests/ are restored at the end.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
git apply benchmarks/experiments/odd_n_clusters.patch || exit 1
case "${1:-perf}" in
  tests)
    bash tools/gpu_session.sh par
    ;;
  perf)
    python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
    shapes=(--shape 4096,2112,7168 --shape 2048,2112,7168 --shape 4096,7000,7000 --shape 128,2112,7168
            --shape 4096,2112,2048)
    for round in 1 2; do for cl in 1 2; do
      DG_TUNE_CLUSTER=$cl DG_JIT_CACHE_DIR=/tmp/oddn-$cl timeout -k 5 100 python -m jax_deepgemm bench --only dense \
        --iters 30 --output "$OUT/oddn_cl${cl}_r$round.json" "${shapes[@]}" 2>&1 | grep -E "^ +[0-9]" |
        sed "s/^/cl=$cl r$round /"
    done; done | tee "$OUT/oddn_bench.txt"
    timeout -k 5 300 python -I -m pytest tests/test_gpu_configs.py -q -rs -p no:cacheprovider -k "x2" 2>&1 |
      tail -5 | tee "$OUT/oddn_config_tests.txt"
    ;;
  *) echo "usage: run_odd_n_clusters.sh perf | tests" >&2; git checkout -q -- cuda ffi tests; exit 2 ;;
esac
git checkout -q -- cuda ffi tests
