#!/usr/bin/env bash
# Ran in session 64: NOTES 107 and tests/gpu_runs/2026-11-30_session64/ say what it measured and what was taken.
# (What ran is 01_/run.sh there; its loop is now ab_ncu. kgrouped_f32_lines_all.patch no longer applies since
# to_line_layout: kgrouped_lines_every_n.patch is the same side for the tree, used by kgrouped_lines_slices.sh.)
# Prepared in session 63, not run (device time spent): why the k-grouped f32 line stores (lane ^ 4) lose 4-5% at
# N = 2048 and gain ~1% at every other N tried (NOTES 106). Nsight Compute, clocks left free, one launch each of
# tools/profile_one.py k_grouped (with C) at N = 2048 and 4096, two sides: old (the tree: 8 rows x 64 bytes at
# N = 2048, lines elsewhere) and all (kgrouped_f32_lines_all.patch: lines at every N). At N = 4096 both sides run the
# lines: the control. L2 write requests and sectors, the traffic over the fabric between the two L2 partitions, DRAM
# bytes, the kernel's time.
# Prediction: the line stores halve the L2 write requests at N = 2048 as at 4096 (4 lines per warp store instead of
# 8 half lines), the same sectors. If a store's four rows 16 KB apart fall in the far L2 partition together, `all`
# at N = 2048 shows more fabric sectors than `old` (and than either side at 4096 per byte written); if their lines
# share DRAM banks, a longer kernel at equal dram__bytes_write. Neither: the loss is in issue, not in the memory
# system, and ncu's stall sampling (run_ncu.sh) is next. (The DG_PROFILE_WAITS build did not show the loss: 106.)
#   bash benchmarks/experiments/kgrouped_lines_ncu.sh
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup; ab_sent
ab_side all benchmarks/experiments/kgrouped_f32_lines_all.patch
metrics=lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum
metrics+=,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
metrics+=,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_write.sum,dram__bytes_read.sum,gpu__time_duration.sum
AB_SIDES="old all" ab_ncu "$metrics" k_grouped 4,4096,2048,8192 4,4096,4096,8192 | tee "$OUT/kgrouped_lines_ncu.txt"
ab_use old; date -u >>"$OUT/machine.txt"
