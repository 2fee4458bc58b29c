#!/usr/bin/env bash
# Masked clusters sharing B (NOTES 78; masked_multicast_b.patch, only where DG_TUNE_MULTICAST_B=1 forces it):
# DeepGEMM's masked clusters pair a group's adjacent M blocks and share B, ours share A across N blocks; its 256 x 80
# tiles there ran ~12% faster than ours alone and 4-5% faster than ours sharing A. One device call, from the repo root
# (carry .dgprobe for DeepGEMM's masked kernel on the table's draws at the end):
#   bash benchmarks/experiments/masked_multicast_b.sh
# Applies the patch (to the device's copy of the tree), then with it the GPU tests of masked clusters sharing B, of
# dense ones and the masked hostile-data tests, then masked_dg_tiles.sh (which rebuilds) under the model and clusters
# sharing B at DeepGEMM's widths, two draws per shape, the model first and last.
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
git apply benchmarks/experiments/masked_multicast_b.patch || { echo "the patch does not apply"; exit 1; }
python -m pip install -q --no-build-isolation -e . >"$OUT/build_patched.log" 2>&1 ||
  { tail -20 "$OUT/build_patched.log"; exit 1; }
export XLA_PYTHON_CLIENT_PREALLOCATE=false DG_JIT_CACHE_DIR=/tmp/jdg-cache-mmb
# (43 cases: the new ones, dense clusters sharing B, whose walk the patch touches, and the masked hostile-data cases)
timeout -k 5 270 python -I -m pytest tests/test_gpu_configs.py tests/test_gpu_grouped.py -q -rs -p no:cacheprovider \
  -k "multicast_b_masked or multicast_b_dense or (masked and not config)" >"$OUT/tests_masked_multicast_b.log" 2>&1
grep -E "^FAILED|^ERROR|passed|failed" "$OUT/tests_masked_multicast_b.log" | tail -8
mb="DG_TUNE_CLUSTER=2 DG_TUNE_MULTICAST_B=1 DG_TUNE_BLOCK_M=256"
OUT="$OUT" JDG_DRAWS=2 bash benchmarks/experiments/masked_dg_tiles.sh "" "$mb DG_TUNE_BLOCK_N=80" \
  "$mb DG_TUNE_BLOCK_N=96" "$mb DG_TUNE_BLOCK_N=112" "$mb DG_TUNE_BLOCK_N=128" \
  "DG_TUNE_CLUSTER=2 DG_TUNE_MULTICAST_B=1 DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128" ""
