#!/usr/bin/env bash
# wait_ahead.patch (NOTES 16): the one-accumulator K loop waits for the next K block's stage while the last wave's
# wgmmas run, instead of at the top of the loop between the last promotion and the next wgmmas (Nsight Compute put
# ~230 cycles per K block there at 256 x 128). One device call after the build: the dense and forced-configuration
# GPU tests with the patch, a same-run A/B against HEAD on the dense M = 4096 rows, and cycles per K block of the
# 256 x 128 kernel patched and not. Logs under $OUT; cuda/ is restored at the end.
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
git apply benchmarks/experiments/wait_ahead.patch || exit 1
DG_JIT_CACHE_DIR=/tmp/wa-cache-tests timeout -k 5 280 python -I -m pytest tests/test_gpu_dense.py \
  tests/test_gpu_configs.py -q -x -rs -p no:cacheprovider 2>&1 | tail -4 | tee "$OUT/wait_ahead_tests.txt"
AB_ROUNDS=1 timeout -k 5 240 bash benchmarks/experiments/run_ab_head.sh | tee "$OUT/wait_ahead_ab.txt"
export DG_PROFILE_WAITS=1 JDG_PROFILE_RUNS=3
for variant in wait_ahead base; do
  [ "$variant" = base ] && git checkout -q -- cuda
  echo "## dense 4096,7168,16384 $variant"
  DG_JIT_CACHE_DIR=/tmp/wa-cache-$variant timeout -k 5 90 python tools/profile_one.py dense 4096,7168,16384 2>&1 |
    grep -v -E "^I[0-9]|^E[0-9]{4} "
done >"$OUT/wait_ahead_profile.log"
git checkout -q -- cuda
python tools/waits_summary.py <"$OUT/wait_ahead_profile.log" | tee "$OUT/wait_ahead_summary.txt"
gzip -f "$OUT/wait_ahead_profile.log"
