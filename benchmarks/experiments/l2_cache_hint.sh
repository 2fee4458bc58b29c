#!/usr/bin/env bash
# The copies with an explicit L2 cache policy operand (NOTES 80's lead): DeepGEMM's TMA loads carry one (cute's
# EVICT_NORMAL value; in SASS `UTMALDG.2D [..], [..], desc[..]`), ours none, and on 4096 x 2112 x 7168's 128 x 192
# tiles ours reached L2 as 16-20% more sector reads for the same copies. l2_cache_hint.patch gives tma_load_2d that
# operand (SASS checked here: the desc[] form, 168 registers, no spills). Prepared, not run: one device call, Nsight
# Compute's L2 read sectors from the SMs and fabric sectors of 4096 x 2112 x 7168 (118 CTAs, no clusters) with and
# without, then same-call kernel times on the dense M = 4096 rows, new / old alternating, two rounds, then the dense
# GPU tests with the patch.
#   bash benchmarks/experiments/l2_cache_hint.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side new benchmarks/experiments/l2_cache_hint.patch || exit 1
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
metrics=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,gpu__time_duration.sum
for side in new old; do
  ab_use "$side"
  JDG_PROFILE_RUNS=1 JDG_PROFILE_SMS=118 DG_TUNE_CLUSTER=1 DG_JIT_CACHE_DIR="/tmp/ab_cache_$side" timeout -k 5 120 \
    "$NCU" -k regex:jdg_fp8_gemm -c 1 --clock-control none --metrics "$metrics" \
    python tools/profile_one.py dense 4096,2112,7168 2>&1 | grep -E "lts__|gpu__time" | sed "s/^/$side ncu | /"
done | tee "$OUT/l2_cache_hint_ncu.txt"
ab_dense 2 4096,2112,7168 4096,24576,1536 4096,32768,512 4096,7168,16384 4096,4096,7168 4096,7168,2048 |
  tee "$OUT/l2_cache_hint.txt"
ab_use new
DG_JIT_CACHE_DIR=/tmp/ab_cache_new JDG_TEST_LIMIT=170 ab_tests dense tests/test_gpu_dense.py
ab_use old
echo "elapsed $((SECONDS - start)) s"
