#!/usr/bin/env bash
# Session 67: C at N % 4 != 0 loaded in the two aligned pieces around a lane's four values (16 bytes f32, 8 bf16),
# as c_shifted_loads_eager.sh, but the window between them made only once the batch's loads are all issued (as
# c_quad_value's conversions), and f32 C in batches of 4 chunk pairs (two pieces per quad: twice the registers).
# c_shifted_loads.patch; side new = the tree as sent, side old = the patch reversed (4cac816's headers).
# Prediction: the eager form ran f32 C 7169 209 -> 312 us: each quad's window waited for its loads before the next
# quad's were issued. Deferred, the loads overlap as before, and the vector loads replace 4 element loads: f32 C 7169
# 209 -> ~175-185, bf16 C 157 -> ~140; N % 4 == 0 unchanged. If it is not faster, the instruction count per quad
# (address, bounds, t per quad) is what costs.
# Leaves the faster side's headers in cuda/ (new only if both 7169 rows gain over 1%) and names it in
# $OUT/decision.txt, for the tests that follow.
# Ran in session 67 (NOTES 110) on 4cac816 + this patch: slower still (f32 C 7169 207 -> 293 us, bf16 C 156 -> 167);
# side old taken.
# From the repository root (on 4cac816 + the patch):  bash benchmarks/experiments/c_shifted_loads.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_reversed benchmarks/experiments/c_shifted_loads.patch
AB_SIDES="new old" ab_dense 2 c=f32 4096,7169,2048 4096,7170,2048 4096,7168,2048 | tee "$OUT/rows.txt"
AB_SIDES="new old" ab_dense 2 c=bf16 4096,7169,2048 4096,7170,2048 4096,7168,2048 | tee -a "$OUT/rows.txt"
echo "rows done $((SECONDS - start)) s"
side=$(awk '$4 == 7169 { t[$1 " " $6] += $7; n[$1 " " $6]++ }
  END { ok = 1; for (c in t) if (c ~ /^new/) { split(c, a, " "); o = t["old " a[2]] / n["old " a[2]];
        if (t[c] / n[c] > 0.99 * o) ok = 0 } print ok ? "new" : "old" }' "$OUT/rows.txt")
echo "side taken: $side" | tee "$OUT/decision.txt"
ab_use "$side"
