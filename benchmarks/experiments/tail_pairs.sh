#!/usr/bin/env bash
# NOTES 27: where the tail-split kernels lose time. Dense rows and masked rows, each as the heuristics choose
# (base), launched as clusters of 2 without any other change (pairs), and with the tail split (tail), twice.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
dense=(--shape 4096,24576,1536 --shape 4096,32768,512 --shape 4096,7168,2048 --shape 4096,7168,16384)
for round in 1 2; do
  for setting in "base:DG_TUNE_TAIL_SPLIT=0" "pairs:DG_TUNE_TAIL_SPLIT=0 JDG_DEBUG_LAUNCH_PAIRS=1" "tail:DG_TUNE_TAIL_SPLIT=1"; do
    label=${setting%%:*}
    env ${setting#*:} timeout -k 5 60 python -m jax_deepgemm bench --only dense --iters 20 "${dense[@]}" \
      --output "$OUT/d_$label$round.json" 2>&1 | grep -E "^ +[0-9]" | sed "s/^/$label r$round /"
    env ${setting#*:} timeout -k 5 90 python -m jax_deepgemm bench --only grouped --grouped masked --iters 20 \
      --output "$OUT/m_$label$round.json" 2>&1 | grep -E "^[a-z0-9_]+ +\[" | sed "s/^/$label r$round /"
  done
done | tee "$OUT/tail_pairs.txt"
(cd "$OUT" && tar czf tail_pairs_json.tgz ./*.json && rm ./*.json)
