#!/usr/bin/env bash
# dense_as_grouped.py on DeepGEMM's dense M = 4096 shapes and 8192 x 3072 x 4096, two rounds (JDG_ROUNDS: others,
# e.g. "1"; NOTES 91).
#   bash benchmarks/experiments/dense_as_grouped.sh
. "$(dirname "$0")/prelude.sh"
build
shapes=(4096,2112,7168 4096,24576,1536 4096,32768,512 4096,7168,16384 4096,4096,7168 4096,7168,2048 8192,3072,4096)
for round in ${JDG_ROUNDS:-1 2}; do
  timeout -k 5 200 python benchmarks/experiments/dense_as_grouped.py "r$round" "${shapes[@]}" 2>&1 |
    grep -vE "^(W|I)[0-9]{4}|absl" | tee -a "$OUT/dense_as_grouped.txt"
done
