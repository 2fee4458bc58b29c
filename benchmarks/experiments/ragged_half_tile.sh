#!/usr/bin/env bash
# ragged_half_tile.patch: the model counts a ragged group's last tile as half empty on average (groups of fewer than
# 384 rows over K >= 2048), rather than M / G rows per group exactly. Why (NOTES 93): M / G a multiple of 256 (e.g.
# 4096 tokens x top-8 over 128 experts) made 256-row tiles look whole in the count, so the model took 256 x 128 where
# group sizes vary; there, on an H200 (2026-11-29, ragged_128_rows.sh models), 128-row tiles ran 4.2% (Qwen3-30B up,
# GPT-OSS up) and 9.6% (GPT-OSS down) faster. Offline (select_fp8_gemm_config): the patch moves the picks of
# DeepSeek-V3 at 4k tokens, Qwen3-30B up (skewed) and GPT-OSS up / down among moe_models.py's layers, and of groups of
# 128-256 rows at K >= 2048 (mostly 256 x 128 -> 128 x 160 / 192); the benchmark table's rows and groups of 384+ rows
# (step 12) keep theirs. One device call (estimated at 5-6 minutes): HEAD against HEAD + the patch, the package rebuilt
# for each side (host code), two rounds, the sides alternating; the layers below, both group draws each.
# Predicted: the three rows above as measured (-4% to -10%); DeepSeek-V3 4k and the synthetic rows -2% to -8%; the
# controls (qwen235_up, dsv3_down_16k: picks unchanged) within 1%.
# The patch is against 6b0b738's ffi/heuristics.cc (step 16, 899cbcd, changed that file since: it no longer applies).
#   bash benchmarks/experiments/ragged_half_tile.sh
. "$(dirname "$0")/prelude.sh"
layers=(dsv3_up_4k dsv3_down_4k qwen30_up gptoss_up gptoss_down qwen235_up dsv3_down_16k
        r192n4096k7168=32,6144,4096,7168 r256n2048k4096=16,4096,2048,4096 r128n2048k4096=64,8192,2048,4096
        r192n2880k2880=128,24576,2880,2880)
heuristics_patch_rounds "$(dirname "$0")/ragged_half_tile.patch" "${layers[@]}"
