#!/usr/bin/env bash
# Split K again after its exchange lost its release fences (NOTES 49): rows the model leaves unsplit (B's HBM stream
# binds them, step 9), as the model takes them and split over 2 CTAs with tiles twice as wide (NOTES 22's split
# picks, forced: DG_TUNE_SPLIT_K=2 with DG_TUNE_BLOCK_N), alternating, three rounds. NOTES 22 measured them with the
# old exchange: on the H100 64 / 128 x 4096 x 7168 +15% / +7% split, 64 x 7168 x 16384 +2%; on the H200 256 x 2112
# x 7168 -10%, 128 x 4096 x 7168 -5%. If a row gains, step 9's exchange term (kExchangeFixedCycles) is what to
# revisit. One device call: bash benchmarks/experiments/split_k_rows.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
export DG_JIT_CACHE_DIR=/tmp/split_k_rows
wide64=(64,4096,7168 128,4096,7168 256,2112,7168)  # unsplit 64 x 32 / 128 x 32 / 128 x 32 tiles
wide128=(64,7168,16384 64,7168,2048)               # unsplit 64 x 64 tiles
run() {  # label, rows..., with the environment already set
  local label=$1; shift
  timeout -k 5 100 python benchmarks/experiments/dense_rows.py "$@" 2>&1 | grep -E " us |rror" | sed "s/^/$label /"
}
for round in 1 2 3; do
  run "model   r$round" "${wide64[@]}" "${wide128[@]}"
  DG_TUNE_SPLIT_K=2 DG_TUNE_BLOCK_N=64 run "split64 r$round" "${wide64[@]}"
  DG_TUNE_SPLIT_K=2 DG_TUNE_BLOCK_N=128 run "split128 r$round" "${wide128[@]}"
done 2>&1 | tee "$OUT/split_k_rows.txt"
echo "elapsed $((SECONDS - start)) s"
