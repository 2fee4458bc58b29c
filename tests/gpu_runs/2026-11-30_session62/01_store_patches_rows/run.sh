# Session 62 call 1: both prepared store patches against the headers as sent, three sides, same call, rows only
# (tests follow for whichever is taken).
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
cp .run1.sh "$OUT/run.sh" 2>/dev/null
ab_setup
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_sent
ab_side bf16 benchmarks/experiments/bf16_store16.patch || echo "bf16 patch failed"
ab_side f32 benchmarks/experiments/f32_store_lines.patch || echo "f32 patch failed"
export AB_SIDES="bf16 f32 old"
AB_ROUNDS=2 ab_grouped k_grouped_bf16=4,4096,7168,8192 k_grouped_bf16=4,7168,2048,8192 \
  k_grouped_no_c=16,7168,4096,1024 k_grouped_no_c=16,2048,7168,1024 k_grouped=4,4096,7168,8192 masked |
  tee "$OUT/grouped_rows.txt" | cut -c1-110
echo "grouped done $((SECONDS - start)) s"
ab_dense 2 c=f32 4096,7168,2048 4096,4096,7168 | tee "$OUT/dense_f32_rows.txt"
DG_TUNE_TMA_STORE=0 ab_dense 2 4096,7168,2048 2048,2112,7168 | tee "$OUT/dense_bf16_reg_rows.txt"
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
