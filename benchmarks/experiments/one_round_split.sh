#!/usr/bin/env bash
# Ran in session 108 (NOTES 155) with heuristics step 22 as prepared in session 107 (one_round_split.patch, at 0229318;
# removed since: main's step 22, e30e146, is its narrowed form, so on main the 128 x 128 groups below do not move).
# Prepared (session 107, no device): heuristics step 22 as one_round_split.patch. Where a dense pick runs one round
# (M > 128, K >= 4096, 128x128 B scales, 128-byte rows), a tile whose tiles fill at most half of the SMs, each split
# over K by a pair of CTAs through the tail split, if the model prices that half wave strictly lower. On a grid of 550
# shapes (M 192-2048, N 1024-7168, K 4096-16384) it moves 225, all M <= 2048 single rounds, the model pricing them
# at 0.60-0.83 of the old pick. The A/B: the patched build, its default against DG_TUNE_TAIL_SPLIT=0 (which restores
# the picks before it; on these single rounds step 21 takes nothing), two rounds (dense_tail_rounds.sh).
#   OUT=dir bash benchmarks/experiments/one_round_split.sh   (~4 minutes estimated with the build and the GPU test)
# Groups, in order (the old pick; "more": the split runs on >= 1.3x the old round's CTAs): 128 x 128 more, 128 x 128
# same, 128 x 64, 256 x 32 / 16, 256 x 64, controls (not moved).
# Predicted (written before any run): "128 x 128 more" -15% to -30% (SMs the old round left idle now work); "128 x
# 128 same" +0% to +10% (the split adds an exchange and leaves the accumulator pipeline's tiles for full-width ones,
# which lost 11-18% in step 21's runs, NOTES 153); 128 x 64, 256 x 32 / 16 and 256 x 64 (narrow tiles bound by their
# copies, NOTES 17) -5% to -20%; controls level. Keep the rule only for the groups that gain, and then check it on
# shapes held out (K = 5120 / 16384, which the first run has not; three per group, in the groups' order, drawn from
# the grid's moved shapes; with the patch narrowed to the groups kept, applied and built as above, its prediction
# written here first):
#   OUT=dir bash benchmarks/experiments/dense_tail_rounds.sh 512,3072,5120 256,5120,5120 768,1536,5120 \
#     192,7168,16384 256,7168,5120 256,7168,16384 256,4096,16384 512,2112,5120 192,2560,16384 640,1024,5120 \
#     384,1536,16384 384,1024,5120 384,3072,16384 640,2112,5120 896,2048,5120
set -euo pipefail
patch=benchmarks/experiments/one_round_split.patch  # (git show 0229318:$patch > $patch to run it as prepared)
[ -f "$patch" ] && git apply --check "$patch" 2>/dev/null && git apply "$patch"  # (applied already: nothing to do)
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
# the default picks' GPU test (step 22's single rounds: 128 x 160 and pipelined 128 x 128 split, against the oracle)
python -I -m pytest tests/test_gpu_dense.py -k short_last -q -p no:cacheprovider 2>&1 | tail -3 |
  tee "$OUT/tests.txt" || true
more=(768,1536,7168 512,3072,4096 1024,1536,14336 256,6144,7168)
same=(2048,1024,7168 512,4096,7168 768,2112,4096 1280,1536,14336)
narrow_128x64=(512,1536,7168 256,3072,4096 512,2112,14336 768,1024,7168)
narrow_256x32=(384,2112,7168 640,1024,4096 384,1024,7168)
narrow_256x64=(640,2048,7168 384,4096,7168 896,1536,4096)
controls=(640,3072,7168 4096,4096,7168)
OUT="$OUT" bash benchmarks/experiments/dense_tail_rounds.sh "${more[@]}" "${same[@]}" "${narrow_128x64[@]}" \
  "${narrow_256x32[@]}" "${narrow_256x64[@]}" "${controls[@]}" | tee "$OUT/run.txt" >/dev/null
python benchmarks/experiments/dense_tail_ab.py "$OUT/run.txt" "128x128 more:4" "128x128 same:4" "128x64:4" \
  "256x32/16:3" "256x64:3" "controls:2" | tee "$OUT/ab.txt"
