#!/usr/bin/env bash
# Who waits in the small-M dense kernels that trail DeepGEMM most (K = 7168, N = 2112 / 4096, M = 64 / 128):
# DG_PROFILE_WAITS cycles per K block and barrier waits, without / with a cluster of 2 (A multicast), and at a
# quarter of the SMs (feed-bound if that is much faster per K block). One device call; logs under $OUT.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=5
run() {
  echo "## $* $(env | grep -E '^(DG_TUNE|JDG_PROFILE_SMS)' | sort | tr '\n' ' ')"
  timeout -k 5 90 python tools/profile_one.py "$@" 2>&1 | grep -v -E "^I[0-9]|^E[0-9]{4} "
}
{
  # shape, then the pick's tile (forced at 33 SMs, where the heuristics would choose wider tiles)
  for sc in "64,2112,7168 64 16" "128,2112,7168 128 16" "128,4096,7168 128 32"; do
    set -- $sc
    run dense $1
    DG_TUNE_CLUSTER=2 run dense $1
    JDG_PROFILE_SMS=33 DG_TUNE_BLOCK_M=$2 DG_TUNE_BLOCK_N=$3 run dense $1
  done
} >"$OUT/small_m_waits.log"
python tools/waits_summary.py <"$OUT/small_m_waits.log" | tee "$OUT/small_m_waits_summary.txt"
grep "jax_deepgemm: " "$OUT/small_m_waits.log" | sort -u | tee "$OUT/small_m_waits_configs.txt"
gzip -f "$OUT/small_m_waits.log"
