#!/usr/bin/env bash
# Whether contiguous GEMMs should take dynamic tiles where K <= 1536 (session 90; heuristics.cc step 18 held that
# rule at 2a6f939 only).
# Forced on moe_models.py's 12 contiguous layers (contiguous_dynamic_128.sh, two draws each), dynamic tiles ran -7.2%
# to +3.0% against the static order: the two layers with K <= 1536 gained in both draws (qwen30_down K = 768 -7.2% /
# -6.3%, qwen235_down K = 1536 -2.8% / -5.0%), every K = 2048 layer lost (+1.0..+3.0%, one -0.2%), the rest mixed.
# Short K blocks make short tiles, so the order's imbalance is a larger share of the time. This checks the rule out of
# sample: other layers with K from 512 to 1536 (and one just past, K = 1664), the two again.
# Prediction: DG_TUNE_DYNAMIC_TILES=1 1-7% faster than the static order on the K <= 1536 layers; K = 1664 level.
# One device call: moe_models.py's contiguous rows, two rounds, DG_TUNE_DYNAMIC_TILES=0 / 1 (the labels as run at
# 2a6f939: static / default); then the contiguous GPU tests of the grouped file and the dynamic ones of the configs
# file, dynamic tiles forced.
# Ran on an H200, 2026-12-02 (NOTES 136, tests/gpu_runs/2026-12-02_session90/05_), cut down to the device time left
# (the full call was lost with its machine): the even draws of qwen30_down, k512, k1024, k1536 and k1664, no tests.
# qwen30_down -7.6%, k1536 -4.5%, k1664 +0.2%, but k512 +4.4% and k1024 +3.9%: the rule does not hold out of sample.
# Not taken (heuristics.cc as before).
. "$(dirname "$0")/prelude.sh"
build
export DG_TUNE_DYNAMIC_TILES=1  # the side "default" (the rule's side at 2a6f939)
moe_contiguous_rounds moe_rows.txt static DG_TUNE_DYNAMIC_TILES=0 qwen30_down qwen235_down k512=64,16384,2048,512 \
  k1024=32,8192,4096,1024 k1280=32,16384,3072,1280 k1408=8,8192,4096,1408 k1536=16,4096,7168,1536 \
  k1664=16,8192,4096,1664 >/dev/null
parallel_tests tests/test_gpu_grouped.py tests/test_gpu_configs.py -k "contiguous and (not configs or dynamic_tiles)" \
  2>&1 | tee "$OUT/tests.txt"
date -u
[ -d "$OUT/logs" ] && tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -r "$OUT/logs"
