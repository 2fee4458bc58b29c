# benchmarks/NOTES.md 112: the table's M = 4096 rows (and two more) in forced 128-row tiles against the model's
# picks, same build, two rounds: whether tiles that hide the promotion (the accumulator pipeline at 128 x 128,
# half-width groups at 128 x 160 / 192) beat 256 x 128, whose promotion is exposed, now that the power cap sets the
# clock. Sides: model; p128 (128 x 128, the model's cluster); p128x2 (128 x 128 in clusters of 2); h160, h192.
# Run from the repo root with OUT set: bash benchmarks/experiments/tile_sweep_4096.sh
source benchmarks/experiments/ab_headers.sh
ab_setup
SHAPES="4096,2112,7168 4096,24576,1536 4096,32768,512 4096,7168,16384 4096,4096,7168 4096,7168,2048 8192,7168,7168"
p128="DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128"
ab_env_rows 2 "$SHAPES" model "p128 $p128" "p128x2 $p128 DG_TUNE_CLUSTER=2" \
  "h160 DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=160" "h192 DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192"
echo "done in $((SECONDS - start)) s"
