#!/usr/bin/env bash
# Does the plain 256-row kernel pay for code it carries but does not run? (NOTES 51: the tail split's paths compiled
# in but never taken cost +5% to +8% on short-K dense rows, +2.5% at K = 16384.) all_only.patch compiles only the
# K loop for passes whose two waves are whole (right for dense M % 256 == 0 only: a timing experiment, not a
# kernel), which drops the other loop copy (SASS 2473 -> 1833 lines at 256 x 128, K = 2048). A/B against the
# headers as sent on dense M = 4096 rows, two rounds; then Nsight Compute stall samples of 4096 x 7168 x 2048 with
# the headers as sent, all_only, and dead_split_paths (is the dead code's cost instruction fetch: stall_no_inst?).
# One device call, from the repo root: bash benchmarks/experiments/all_only.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side new benchmarks/experiments/all_only.patch || exit 1
ab_dense 2 4096,7168,2048 4096,32768,512 4096,24576,1536 4096,7168,16384 4096,4096,7168 2>&1 | tee "$OUT/all_only_dense.txt"
ncu_one() {  # label: Nsight Compute on the headers now in cuda/, stall summary to $OUT/ncu_LABEL.txt
  rm -rf /tmp/ncu-cache
  OUT="$OUT/ncu_$1" timeout -k 5 150 bash benchmarks/experiments/run_ncu.sh dense 4096,7168,2048 >/dev/null 2>&1
  python benchmarks/experiments/ncu_stalls.py "$OUT/ncu_$1/ncu_dense_4096x7168x2048/ncu_source_sass.csv.gz" 12 \
    >"$OUT/ncu_$1.txt" 2>&1
  echo "== $1"; sed -n 1,16p "$OUT/ncu_$1.txt"; grep -E "Duration|Warp Cycles Per Issued" \
    "$OUT/ncu_$1/ncu_dense_4096x7168x2048/ncu_details.txt" | head -3
}
ab_use old; ncu_one base
ab_use new; ncu_one all_only
ab_use old; git apply benchmarks/experiments/dead_split_paths.patch && ncu_one dead
ab_use new
echo "elapsed $((SECONDS - start)) s"
