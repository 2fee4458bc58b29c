#!/usr/bin/env bash
# Prepared in session 64, run in session 66 (NOTES 109: the slices are evenly loaded).
# The next probe of the k-grouped f32 line stores' loss at
# N = 2048 (NOTES 107: +4.7% under ncu with half the L2 write requests and the same fabric sectors and DRAM bytes).
# The same launches as kgrouped_lines_ncu.sh (tools/profile_one.py k_grouped with C at N = 2048 and 4096; side old =
# the tree, 8 x 64-byte stores at N = 2048; side all = kgrouped_lines_every_n.patch, to_line_layout at every N),
# with ncu's rollups over the L2 slices (.avg / .max / .min) instead of the totals, and the write
# sectors' tag lookups (hit / miss).
# Prediction: if a line store's four rows 16 KB apart land on the same slices, `all` at N = 2048 shows a max / avg of
# write requests (and of slice active cycles) well above old's at 2048 and both sides' at 4096 (say 1.5x against
# ~1.05x); if the ratios match, the loss is not in which slices the writes reach, and ncu's warp stall sampling of
# the epilogue (experiments/run_ncu.sh, ncu_stalls.py) is next. More write misses for `all` would point at the L2's
# write allocation instead.
#   bash benchmarks/experiments/kgrouped_lines_slices.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup; ab_sent
ab_side all benchmarks/experiments/kgrouped_lines_every_n.patch
metrics=""
for m in lts__t_requests_srcunit_tex_op_write lts__t_sectors_srcunit_tex_op_write lts__cycles_active; do
  metrics+=${metrics:+,}$m.avg,$m.max,$m.min
done
metrics+=,lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum
metrics+=,gpu__time_duration.sum
AB_SIDES="old all" ab_ncu "$metrics" k_grouped 4,4096,2048,8192 4,4096,4096,8192 | tee "$OUT/kgrouped_lines_slices.txt"
ab_use old; date -u >>"$OUT/machine.txt"
