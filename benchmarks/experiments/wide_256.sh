# benchmarks/NOTES.md 112: 128 x 256 tiles (forced; each K block's two 128-wide halves one after the other in one
# accumulator, wide_256.patch) against the model's picks, same build. First the 224- and 256-wide GPU tests
# (split_halves cases of test_gpu_configs.py), then two rounds of dense rows per side:
#   model   the heuristics' picks (256 x 128; clusters of 2 sharing A at 4096 x 7168 x 16384)
#   wide2   128 x 256, the model's cluster (2, sharing B)
#   wide2a  128 x 256 in clusters of 2 sharing A
#   wide1   128 x 256, no cluster
# Run from the repo root with OUT set: bash benchmarks/experiments/wide_256.sh (applies wide_256.patch first)
source benchmarks/experiments/ab_headers.sh
ab_patched benchmarks/experiments/wide_256.patch
ab_setup
timeout -k 5 300 python -I -m pytest tests/test_gpu_configs.py -v -rs -p no:cacheprovider \
  -k "split_halves and (bn256 or bn224)" >"$OUT/tests_wide.log" 2>&1
grep -E "passed|failed" "$OUT/tests_wide.log" | tail -1; grep -E "^FAILED" "$OUT/tests_wide.log" | head
SHAPES="4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,24576,1536 4096,32768,512 8192,7168,7168 2048,7168,7168"
wide="DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=256"
ab_env_rows 2 "$SHAPES" model "wide2 $wide" "wide2a $wide DG_TUNE_CLUSTER=2 DG_TUNE_MULTICAST_B=0" \
  "wide1 $wide DG_TUNE_CLUSTER=1"
echo "done in $((SECONDS - start)) s"
