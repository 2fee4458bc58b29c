# Session 63 call 2: the k-grouped f32 line stores (kgrouped_f32_lines.patch) against the tree over more N and M, with C,
# two rounds: which rows lose (call 1: N = 2048 lost 4-5% at M = 4096 and 7168; 3072, 4096, 7168 gained 0.7-1.4%).
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_patch_vs_head benchmarks/experiments/kgrouped_f32_lines.patch
cp .run2.sh "$OUT/run.sh"
AB_ROUNDS=2 ab_grouped k_grouped=4,4096,1024,8192 k_grouped=4,4096,1536,8192 k_grouped=4,4096,2560,8192 \
  k_grouped=4,4096,5120,8192 k_grouped=4,4096,6144,8192 k_grouped=4,4096,8192,8192 k_grouped=4,2048,2048,8192 \
  k_grouped=4,6144,2048,8192 k_grouped=8,4096,2048,4096 | tee "$OUT/stride_rows2.txt"
rm -f $OUT/build.log; echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
