#!/usr/bin/env bash
# L2 requests against delivered sectors on 4096 x 2112 x 7168 (NOTES 81): Nsight Compute, clocks left free, on
# DeepGEMM's 128 x 192 kernel (.dgprobe row 17, carried; built from its public source for measurement only) and ours
# as the tree launches it (118 CTAs, no clusters; since 414e5ce with no cluster attribute). Session 41 found the same
# delivered sectors with 18% more L2 requests in ours (with the attribute); prepared, not run.
#   bash benchmarks/experiments/ncu_requests_2112.sh      (device call, with carry [".dgprobe"])
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
chmod +x .dgprobe/dg_dense_bench
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
metrics=lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
metrics+=,l1tex__m_xbar2l1tex_read_sectors.sum
metrics+=,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_read.sum,gpu__time_duration.sum,launch__cluster_dim_x
run() {  # name, kernel regex, command...
  local name=$1 regex=$2; shift 2
  timeout -k 5 120 "$NCU" -k "regex:$regex" -c 1 --clock-control none --metrics "$metrics" "$@" 2>&1 |
    grep -E "lts__|l1tex__|dram__|gpu__|launch__" | sed "s/^/$name | /"
}
{
  run dg sm90_fp8 ./.dgprobe/dg_dense_bench --rows 17 --iters 1 --warmup 0
  JDG_PROFILE_RUNS=1 DG_JIT_CACHE_DIR=/tmp/ncu-cache run ours jdg_fp8_gemm \
    python tools/profile_one.py dense 4096,2112,7168
} | tee "$OUT/ncu_requests_2112.txt"
