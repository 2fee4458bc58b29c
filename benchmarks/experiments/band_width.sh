#!/usr/bin/env bash
# The tile order's band width (band_4.patch, band_8.patch; NOTES 82): kernels with bands of 4 and 8 N blocks against
# the tree's 16, one build. First their correctness (check_dense.py, poisoned outputs), then dense rows with the
# three sides alternating, two rounds (band_width.txt), then Nsight Compute's L2 requests on 4096 x 2112 x 7168 for
# each side (band_width_ncu.txt; its prepared counterpart for DeepGEMM: ncu_requests_2112.sh).
#   bash benchmarks/experiments/band_width.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side b4 benchmarks/experiments/band_4.patch || exit 1
ab_side b8 benchmarks/experiments/band_8.patch || exit 1
rows=(4096,2112,7168 4096,24576,1536 4096,7168,2048 4096,4096,7168 4096,7168,16384)
for v in b4 b8; do
  ab_use "$v"
  DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 120 python benchmarks/experiments/check_dense.py "${rows[@]}" \
    2048,7000,7000 2>&1 | tail -7 | sed "s/^/$v check /"
done | tee "$OUT/band_width_check.txt"
AB_SIDES="b4 b8 old" ab_dense 2 "${rows[@]}" | tee "$OUT/band_width.txt"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
metrics=lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum
metrics+=,lts__t_sectors_srcunit_ltcfabric.sum,gpu__time_duration.sum
for v in b4 b8 old; do
  ab_use "$v"
  JDG_PROFILE_RUNS=1 DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 120 "$NCU" -k regex:jdg_fp8_gemm -c 1 \
    --clock-control none --metrics "$metrics" python tools/profile_one.py dense 4096,2112,7168 2>&1 |
    grep -E "lts__|dram__|gpu__" | sed "s/^/$v | /"
done | tee "$OUT/band_width_ncu.txt"
ab_use old
echo "elapsed $((SECONDS - start)) s"
