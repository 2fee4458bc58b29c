#!/usr/bin/env bash
# Step 12's K bound after NOTES 87 (contiguous groups keep 256-row tiles from K = 6144, interpolated between 5120 and
# 7168): the default against DG_TUNE_BLOCK_M=128 at K = 6144 on small outputs, contiguous only, two rounds.
#   bash benchmarks/experiments/contiguous_k6144.sh
. "$(dirname "$0")/prelude.sh"
build
layers=(r512n2048=24,12288,2048,6144 r512n3072=24,12288,3072,6144 r768n4096=16,12288,4096,6144
        r384n7168=32,12288,7168,6144 r1024n2048=12,12288,2048,6144)
moe_contiguous_rounds contiguous_k6144.txt bm128 DG_TUNE_BLOCK_M=128 "${layers[@]}"
