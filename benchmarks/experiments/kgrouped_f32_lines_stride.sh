#!/usr/bin/env bash
# Prepared in session 62, run in session 63 (NOTES 106: N = 2048 alone lost, at every M; taken for the other N in
# 1692afe, so the patch no longer applies to the tree). Does the row stride decide the k-grouped f32 line stores?
# kgrouped_f32_lines.patch is b359e9b's k-grouped f32 stores of 4 rows x 128 bytes (whole lines) in place of 8 rows x 64
# bytes. NOTES 105 measured them -1.0% / -1.1% on 4 x 4096 x 7168 x 8192 with C but +4.3% on 4 x 7168 x 2048 x 8192
# with C, on the same tiles (256 x 128, cluster 2). The guess: rows 8 KB apart (N = 2048 f32) put a store's four rows
# on fewer memory channels than eight rows did. Rows with C, [G, M, N, K per group], against the headers as sent, two
# rounds: N swept at M = 4096, and M = 7168 at both N. Prediction if the stride decides: the loss at N = 2048 and 4096
# (strides of 8 and 16 KB) at either M, the gain at 3072 and 7168; if M does (7168 rows: 28 row blocks per group
# against 16), both M = 7168 rows lose. Either way a rule on N or M % 4096 could keep the 1%: then the next step.
# From the repository root:  bash benchmarks/experiments/kgrouped_f32_lines_stride.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_patch_vs_head benchmarks/experiments/kgrouped_f32_lines.patch
AB_ROUNDS=2 ab_grouped k_grouped=4,4096,2048,8192 k_grouped=4,4096,3072,8192 k_grouped=4,4096,4096,8192 \
  k_grouped=4,4096,7168,8192 k_grouped=4,7168,2048,8192 k_grouped=4,7168,7168,8192 | tee "$OUT/stride_rows.txt"
date -u >>"$OUT/machine.txt"
