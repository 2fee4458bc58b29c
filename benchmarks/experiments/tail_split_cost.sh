#!/usr/bin/env bash
# What the tail split costs, taken apart (NOTES 153 left it open: full-width tiles given the other full-width tile
# with the split ran 5.6-13.9% slower, where the model, counting the split round as half a round, expected a gain).
# One build, each tile forced without clusters and with the TMA store (the same stages on every shape: 3 for
# 256 x 128, 4 for 128 x 192), the tail split's code compiled in (ts1) or not (ts0), on M fixed and N giving 132
# tiles (one round), 264 (two whole rounds: nothing to split) and 187 (132 + 55: split with ts1), K = 4096 and 7168,
# two rounds. Summary: tail_split_cost.py $OUT/rows.txt (per tile and K: the split code's cost on whole tiles, the
# second round's time R, the split round's time against R / 2, and what an unsplit round of 55 tiles takes).
#   OUT=dir bash benchmarks/experiments/tail_split_cost.sh     (~2-3 minutes estimated)
# Predicted (written before any run): the split code costs whole tiles ~0.5 us each (NOTES 27: ~+1% on two rounds);
# the split round takes R / 2 plus ~1.8 us of exchange (NOTES 79), i.e. 0.55-0.6 R at K = 7168 and 0.6-0.65 R at
# K = 4096; an unsplit round of 55 tiles takes about R. If so, 153's losses are not the split round's but the tiles'
# own: a 256 x 128 round slower per column than a 128 x 192 one at these sizes. A second guess, also before any run,
# from session 106's A/B rows refitted per tile kind (NOTES 154): the split's code +4.7% (256 x 128) / +6.7% (128 x
# 192) per K block of every tile, the split round R / 2 plus 7.3 / 3.7 us; if so, the split's own costs are 153's
# losses.
source benchmarks/experiments/ab_headers.sh
ab_setup
fixed="DG_TUNE_CLUSTER=1 DG_TUNE_TMA_STORE=1"
ab_env_rows 2 "2816,1536,4096 2816,3072,4096 2816,2176,4096 2816,1536,7168 2816,3072,7168 2816,2176,7168" \
  "a256x128_ts0 DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 $fixed DG_TUNE_TAIL_SPLIT=0" \
  "a256x128_ts1 DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 $fixed DG_TUNE_TAIL_SPLIT=1" >/dev/null
ab_env_rows 2 "1408,2304,4096 1408,4608,4096 1408,3264,4096 1408,2304,7168 1408,4608,7168 1408,3264,7168" \
  "b128x192_ts0 DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 $fixed DG_TUNE_TAIL_SPLIT=0" \
  "b128x192_ts1 DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 $fixed DG_TUNE_TAIL_SPLIT=1" >/dev/null
python benchmarks/experiments/tail_split_cost.py "$OUT/rows.txt" | tee "$OUT/summary.txt"
echo "done in $((SECONDS - start)) s"
