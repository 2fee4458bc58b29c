#!/usr/bin/env bash
# The MoE step's k-grouped weight gradients (16 groups of ~1024 tokens, f32 out without C; NOTES 103), where the
# epilogue is a larger share of a tile than on the benchmark's rows: the register stores against
# kgrouped_c_in_d.patch's staged f32 TMA store (DG_TUNE_TMA_STORE=1; NOTES 85 measured it on long K), alternating.
# One device call, from the repository root. (Ran in session 60 as `05_`: +2.2% / flat, not taken, NOTES 103.)
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_patched benchmarks/experiments/kgrouped_c_in_d.patch
ab_setup
export DG_JIT_CACHE_DIR=/tmp/jdg-cache-tma-short-k
rows=(k_grouped_no_c=16,7168,4096,1024 k_grouped_no_c=16,2048,7168,1024 k_grouped_no_c=4,4096,7168,8192)
for round in 1 2; do for t in 0 1; do
  DG_TUNE_TMA_STORE=$t timeout -k 5 100 python benchmarks/experiments/grouped_rows.py "${rows[@]}" 2>&1 |
    grep -E " us |rror" | sed "s/^/tma_store=$t r$round /"
done; done | tee "$OUT/short_k_tma.txt"
echo "elapsed $((SECONDS - start)) s"
