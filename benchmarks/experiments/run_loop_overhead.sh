#!/usr/bin/env bash
# NOTES 16's loop-overhead experiments on the two-wave K loop (256-row tiles): wait_ahead.patch (the next
# K block's stage waited for under the last wave's wgmmas) and loop_overhead.patch (that, plus the loop compiled
# separately for passes whose two waves are both active). Two device calls, from the repo root on the GPU machine; logs
# under $OUT; cuda/ is restored at the end of each:
#   bash benchmarks/experiments/run_loop_overhead.sh perf    build, same-run A/B of loop_overhead.patch against
#                                                             HEAD (dense M = 4096 rows), cycles per K block of the
#                                                             256 x 128 kernel as is / wait_ahead / loop_overhead,
#                                                             and 128 x 128 tiles without / with clusters of 2
#   JDG_PAR_LIMIT=470 bash benchmarks/experiments/run_loop_overhead.sh tests
#                                                             every GPU test file with loop_overhead.patch
#                                                             (tools/gpu_session.sh par)
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
x=benchmarks/experiments
case "${1:-perf}" in
  tests)
    git apply $x/loop_overhead.patch || exit 1
    bash tools/gpu_session.sh par
    ;;
  perf)
    python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
    git apply $x/loop_overhead.patch || exit 1
    AB_ROUNDS=1 timeout -k 5 240 bash $x/run_ab_head.sh | tee "$OUT/loop_overhead_ab.txt"
    export DG_PROFILE_WAITS=1 JDG_PROFILE_RUNS=3
    for variant in loop_overhead base wait_ahead; do
      git checkout -q -- cuda
      [ "$variant" = base ] || git apply $x/$variant.patch
      echo "## dense 4096,7168,16384 $variant"
      DG_JIT_CACHE_DIR=/tmp/lo-cache-$variant timeout -k 5 90 python tools/profile_one.py dense 4096,7168,16384 2>&1 |
        grep -v -E "^I[0-9]|^E[0-9]{4} "
    done >"$OUT/loop_overhead_profile.log"
    python tools/waits_summary.py <"$OUT/loop_overhead_profile.log" | tee "$OUT/loop_overhead_summary.txt"
    gzip -f "$OUT/loop_overhead_profile.log"
    # Also (HEAD's kernel): 128 x 128 tiles are fed too slowly at full chip (NOTES 16); do clusters of 2 (A
    # multicast) help them? Kernel us with DG_TUNE_CLUSTER=1 / 2.
    git checkout -q -- cuda
    unset DG_PROFILE_WAITS
    shapes=()
    for nk in 2112,7168 7168,16384 4096,7168 7168,2048; do shapes+=(--shape "4096,$nk"); done
    for cl in 1 2; do
      DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=$cl DG_JIT_CACHE_DIR=/tmp/lo-cache-cl$cl \
        timeout -k 5 150 python -m jax_deepgemm bench --only dense --iters 20 --output "$OUT/bm128_cluster$cl.json" \
        "${shapes[@]}" 2>&1 | grep -E "^ +[0-9]" | sed "s/^/128x128 cluster=$cl /"
    done | tee "$OUT/bm128_clusters.txt"
    ;;
  *) echo "usage: run_loop_overhead.sh perf | tests" >&2; exit 2 ;;
esac
git checkout -q -- cuda
