#!/usr/bin/env bash
# Every dense tile forced on a grid of mid-size shapes (1-7 rounds, where the picks differ most), one build: how far
# is the model's pick from each shape's fastest tile, and would a cost refitted to these times pick better? Steps 12,
# 16, 19, 20 and 21 each patch a place where the cost misprices a tile (NOTES 153: pipelined 128 x 128 runs 11-18%
# better against 128 x 192 than the cost says; a full-width tile with the tail split loses to the other full-width
# tile without it); this measures the whole grid at once instead of one rule at a time. It also measures the tail
# split of a single round (every tile halved over a pair of CTAs when the tiles fill at most half of the SMs), which
# the model never takes for dense GEMMs (step 21 needs two rounds): 512 x 1536 x 7168 runs 96 tiles of 128 x 64 on 96
# SMs, where 48 tiles of 128 x 128 split would run 96 halves of 28 K blocks.
# Sides (DG_TUNE_*): the model's pick; each of 128 x 64 / 128 / 160 / 192, 256 x 64 / 128 as the model would run it
# (its clusters) without the tail split, and without clusters with the tail split compiled in (the kernel splits only
# where the last round is at most half of the CTAs). Summary and refit: dense_tile_oracle.py $OUT (after both parts
# ran in two calls: dense_tile_oracle.py FIRST_OUT SECOND_OUT, here, on the folders the device returned).
#   OUT=dir bash benchmarks/experiments/dense_tile_oracle.sh [first|second|all] [M,N,K ...]
# `first` runs the model and the six tiles without the split, `second` the model (its own machine's reference) and the
# six with it: one device call each (estimated from session 106's runs at ~1.5 s per shape and process: ~370 / ~370 s
# for the 35 default shapes, plus the build); `all` both, over the 600 s a call may take.
# Predicted (written before any run): the model's pick within 3% of the fastest side on about three quarters of the
# shapes, geometric mean of model / fastest 1.02-1.04; the largest gaps at 2-3 rounds and in single rounds that
# leave a third of the SMs idle or more (there a split round -15% to -30%); a refit (time per K block and
# per tile for each tile kind, the split round as half of a round plus a fixed exchange) picking within 1-2% of the
# fastest in leave-one-out, i.e. about -1% to -3% on the grid against the model.
source benchmarks/experiments/ab_headers.sh
part="${1:-all}"
[ $# -gt 0 ] && shift
ab_setup
default_shapes=""
for m in 256 512 768 1024 1536 2048 4096; do
  for nk in 2112,7168 4096,7168 7168,2048 3072,4096 1536,7168; do default_shapes+="$m,$nk "; done
done
shapes="${*:-$default_shapes}"
tiles=("128x64" "128x128" "128x160" "128x192" "256x64" "256x128")
sides=(model)  # (in both parts: each part's reference on its own machine)
if [ "$part" != second ]; then
  for t in "${tiles[@]}"; do
    sides+=("t$t DG_TUNE_BLOCK_M=${t%x*} DG_TUNE_BLOCK_N=${t#*x} DG_TUNE_TAIL_SPLIT=0")
  done
fi
if [ "$part" != first ]; then
  for t in "${tiles[@]}"; do
    sides+=("s$t DG_TUNE_BLOCK_M=${t%x*} DG_TUNE_BLOCK_N=${t#*x} DG_TUNE_CLUSTER=1 DG_TUNE_TAIL_SPLIT=1")
  done
fi
ab_env_rows 1 "$shapes" "${sides[@]}" >/dev/null
python benchmarks/experiments/dense_tile_oracle.py "$OUT"
echo "done in $((SECONDS - start)) s"
