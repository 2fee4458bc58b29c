#!/usr/bin/env bash
# The consumers fetch the next tile, and (contiguous) its rows' expert ids, before this tile's epilogue
# (fetch_next_early.patch), not after it. contiguous_dynamic_gaps.sh (NOTES 137): in the profile build the contiguous
# consumers' step from one tile to the next takes ~900 cycles more than ragged's (the next pass's setup 1632-1763
# cycles against 822-845), about one L2 round trip: the 12 id loads (load_tile_experts, row_expert) that gate the
# tile's first wgmma. Issued before the epilogue they travel while it stores.
# Prediction: contiguous K = 2048 rows -2% to -3% (a round trip of ~0.5 us in tiles of ~15 us), K = 7168 about -1%,
# 16 x 512 x 3072 x 4096 (128-row tiles, shorter) -2% to -4%; ragged, masked, k-grouped and dense level (no loads
# at their tile step but the group walks'); contiguous with dynamic tiles forced closer to its static order.
# One device call (~5 min): output digests of both sides (dense, contiguous, masked: must be equal), then two rounds
# of the grouped rows and four dense rows, sides new (the patch) / old (as sent), and one round of contiguous with
# DG_TUNE_DYNAMIC_TILES=1 on both sides.
# Ran on an H200, 2026-12-02 (NOTES 137, tests/gpu_runs/2026-12-02_session91/02_): digests equal; contiguous K = 2048
# +0.8% / +1.7%, K = 7168 -0.3%, 16 x 512 +0.2%, with dynamic tiles forced +3.6% at K = 2048; ragged -0.3% to -0.9%;
# k-grouped +0.4% to +3.6%; masked -1.0% to +1.9%; dense -0.2% to +1.7%. The patch inlines scheduler.get twice
# (kernels 110-960 SASS lines longer, contiguous 256 x 128 spilling more), so every mode's schedule moves. Not taken.
. "$(dirname "$0")/ab_headers.sh"
ab_patch_vs_head benchmarks/experiments/fetch_next_early.patch
digest_shapes=(4096,7168,2048 128,4096,7168 contiguous=4,8192,7168,2048 contiguous=16,512,3072,4096
  masked=4,256,7168,2048)
for side in new old; do
  ab_use "$side"
  DG_JIT_CACHE_DIR="/tmp/ab_cache_$side" timeout -k 5 120 python benchmarks/experiments/output_digest.py \
    "${digest_shapes[@]}" >"$OUT/digest_$side.txt" 2>&1
done
if cmp -s "$OUT/digest_new.txt" "$OUT/digest_old.txt"; then echo "digests equal ($(wc -l <"$OUT/digest_new.txt") lines)"
else echo "DIGESTS DIFFER"; diff "$OUT/digest_new.txt" "$OUT/digest_old.txt" | head; fi
AB_ROUNDS=2 ab_grouped contiguous contiguous=16,512,3072,4096 masked k_grouped | tee "$OUT/rows.txt"
ab_dense 2 4096,7168,16384 4096,7168,2048 128,7168,2048 4096,2112,7168 | tee "$OUT/dense.txt"
for side in new old; do
  ab_use "$side"
  DG_TUNE_DYNAMIC_TILES=1 DG_JIT_CACHE_DIR="/tmp/ab_cache_${side}_dt" timeout -k 5 150 \
    python benchmarks/experiments/grouped_rows.py contiguous contiguous=16,512,3072,4096 2>&1 |
    grep -E " us |rror" | sed "s/^/${side}_dt /" | tee -a "$OUT/rows_dt.txt"
done
ab_use new
echo "done in $((SECONDS - start)) s"
