#!/usr/bin/env bash
# The two-wave loop's look-ahead wait as a probe (NOTES 76). The loop waits for K block kb + 1's stage after issuing
# kb's last wave and before promoting it, so a stage that lands late holds up that promotion too. Here the check
# after the issue only probes (try: mbarrier.try_wait, test: mbarrier.test_wait) and a stage not yet full is waited
# for after the promotion. Dense M = 4096 rows and grouped rows, sides try / test / old alternating, then the GPU
# tests with the try side. One device call, from the repo root: bash benchmarks/experiments/wait_probe.sh
set -uo pipefail
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side try benchmarks/experiments/wait_probe_try.patch
ab_side test benchmarks/experiments/wait_probe_test.patch
export AB_SIDES="try test old"
ab_dense 2 4096,7168,16384 4096,4096,7168 4096,7168,2048 4096,24576,1536 4096,32768,512 4096,2112,7168 |
  tee "$OUT/dense.txt"
ab_grouped k_grouped contiguous=4,8192,4096,7168 | tee "$OUT/grouped.txt"
echo "elapsed $((SECONDS - start)) s"
ab_use try
export DG_JIT_CACHE_DIR=/tmp/ab_cache_try
JDG_TEST_LIMIT=140 ab_tests try_dense tests/test_gpu_dense.py
JDG_TEST_LIMIT=100 ab_tests try_grouped tests/test_gpu_grouped.py -k "k_grouped or contiguous"
echo "elapsed $((SECONDS - start)) s"
