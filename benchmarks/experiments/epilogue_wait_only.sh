#!/usr/bin/env bash
# Control for epilogue_overlap.patch (NOTES 81): only its wait, the next tile's first stage waited for before this
# tile's epilogue, nothing issued early. As slow as the overlap: the wait is what costs (the stage lands after the
# tile's end); level with the old: the early wgmmas themselves cost. Dense rows, new / old alternating, two rounds.
#   bash benchmarks/experiments/epilogue_wait_only.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side new benchmarks/experiments/epilogue_wait_only.patch || exit 1
ab_dense 2 4096,32768,512 4096,7168,2048 4096,24576,1536 4096,7168,16384 | tee "$OUT/epilogue_wait_only.txt"
ab_use old
echo "elapsed $((SECONDS - start)) s"
