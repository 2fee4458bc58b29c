#!/usr/bin/env bash
# The A scales' copy issued before B's (DeepGEMM's order: A, its scales, B) against the tree (A, B, then the
# scales), NOTES 80's last untried copy lead. Dense rows, two rounds, sides alternating.
source benchmarks/experiments/ab_headers.sh
ab_patch_vs_head benchmarks/experiments/scales_before_b.patch
ab_dense 2 4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,2112,7168 4096,24576,1536 4096,32768,512 128,4096,7168 64,7168,16384 | tee "$OUT/rows.txt"
AB_ROUNDS=2 ab_grouped contiguous=4,8192,4096,7168 k_grouped | tee -a "$OUT/rows.txt"
echo "done in $((SECONDS - start)) s"
