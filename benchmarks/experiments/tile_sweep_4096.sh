# benchmarks/NOTES.md 112: the table's M = 4096 rows (and two more) in forced 128-row tiles against the model's
# picks, same build, two rounds: whether tiles that hide the promotion (the accumulator pipeline at 128 x 128,
# half-width groups at 128 x 160 / 192) beat 256 x 128, whose promotion is exposed, now that the power cap sets the
# clock. Sides: model; p128 (128 x 128, the model's cluster); p128x2 (128 x 128 in clusters of 2); h160, h192.
# Run from the repo root with OUT set: bash benchmarks/experiments/tile_sweep_4096.sh
source benchmarks/experiments/ab_headers.sh
ab_setup
SHAPES="4096,2112,7168 4096,24576,1536 4096,32768,512 4096,7168,16384 4096,4096,7168 4096,7168,2048 8192,7168,7168"
for round in 1 2; do
  for side in model p128 p128x2 h160 h192; do
    case $side in
      model) set -- ;;
      p128) set -- DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 ;;
      p128x2) set -- DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=2 ;;
      h160) set -- DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=160 ;;
      h192) set -- DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 ;;
    esac
    env "$@" DG_PRINT_CONFIGS=1 timeout -k 5 200 python benchmarks/experiments/dense_rows.py $SHAPES \
      2>"$OUT/configs_${side}_r$round.txt" | sed "s/^/$side r$round /" | tee -a "$OUT/rows.txt"
  done
done
echo "done in $((SECONDS - start)) s"
