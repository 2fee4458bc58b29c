#!/usr/bin/env bash
# Tail pairs (NOTES 126): ragged / masked 256 x 128 tiles of <= 64 rows with two K blocks per stage. The sent tree
# ("new") against 9b2f39c ("old", .abtrees/9b2f39c, carried), both with pip --target: ragged_tail_cost.py at the MoE
# step's two shapes (two rounds inside each run); then the new package's GPU tests: the new tail-pair cases and the
# ragged / masked cases of test_gpu_configs.py, test_gpu_grouped.py's ragged and masked cases, test_hostile_data.py
# (12 processes).
. "$(dirname "$0")/prelude.sh"
. tools/ab_side.sh
ab_install new . old .abtrees/9b2f39c
for s in old new; do
  side $s timeout -k 5 150 python $R/benchmarks/experiments/ragged_tail_cost.py 2>&1 | grep -E "^round" |
    sed "s/^/$s /" | tee -a "$OUT/tail_cost.txt"
done
mkdir -p "$OUT/logs"
side new python -m pytest $R/tests/test_gpu_configs.py $R/tests/test_gpu_grouped.py $R/tests/test_hostile_data.py \
  -k "tail_pairs or ((ragged or masked) and not k_grouped) or hostile" --collect-only -q -p no:cacheprovider \
  --rootdir "$R" 2>/dev/null | grep "::" > /tmp/ids.txt
split -n r/12 -d /tmp/ids.txt /tmp/ids_
for f in /tmp/ids_*; do
  ( mapfile -t c < "$f"; c=("${c[@]/#/$R/}")
    side new timeout -k 5 170 python -m pytest "${c[@]}" -q -rs -p no:cacheprovider --rootdir "$R" \
      > "$OUT/logs/tests_${f##*_}.log" 2>&1 ) &
done; wait
echo "tests: $(wc -l < /tmp/ids.txt) cases"
for f in "$OUT"/logs/tests*.log; do echo "$(basename "$f"): $(tail -1 "$f")"; done
grep -h -E "^FAILED|^ERROR|default device" "$OUT"/logs/tests*.log | sort | uniq -c | head -20
date -u
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
