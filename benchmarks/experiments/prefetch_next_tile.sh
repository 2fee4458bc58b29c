#!/usr/bin/env bash
# The next tile's first two K blocks pulled into L2 by the producer four K blocks before a tile's end (dense, no
# clusters; prefetch_next_tile.patch). NOTES 81: a tile's first stage lands after the previous tile's last K block
# (waiting for it before the epilogue cost +4.4% at K = 512); if that is an HBM miss, L2 prefetch shortens the tile
# boundary. Dense rows, new / old alternating, two rounds (4096 x 7168 x 16384 takes clusters: untouched, a control).
#   bash benchmarks/experiments/prefetch_next_tile.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side new benchmarks/experiments/prefetch_next_tile.patch || exit 1
ab_dense 2 4096,32768,512 4096,7168,2048 4096,24576,1536 4096,7168,16384 | tee "$OUT/prefetch_next_tile.txt"
ab_use old
echo "elapsed $((SECONDS - start)) s"
