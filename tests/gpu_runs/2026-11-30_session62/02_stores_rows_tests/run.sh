# Session 62 call 2: the two store layouts as committed against the headers before them (rows, two rounds), then the
# GPU test sweep in parallel processes.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
ab_setup
cp .run2.sh "$OUT/run.sh"
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_prepare_from .ab_old_cuda/cuda
AB_ROUNDS=2 ab_grouped k_grouped=4,4096,7168,8192 k_grouped=4,7168,2048,8192 k_grouped_bf16=4,4096,7168,8192 \
  k_grouped_no_c=16,7168,4096,1024 masked=4,256,4096,7168 masked=2,512,4096,7168 contiguous=4,1000,4096,7168 |
  tee "$OUT/grouped_rows.txt" | cut -c1-110
ab_dense 2 c=f32 4096,7168,2048 | tee "$OUT/dense_rows.txt"
DG_TUNE_TMA_STORE=0 ab_dense 2 4096,7168,2048 | tee -a "$OUT/dense_rows.txt"
echo "rows done $((SECONDS - start)) s"
ab_use new
FINAL=$OUT; OUT=/tmp/tl; mkdir -p $OUT
export DG_JIT_CACHE_DIR=/tmp/jdg-tests
python -I -m pytest tests/test_gpu_configs.py --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" >/tmp/ids.txt
split -n l/3 -d /tmp/ids.txt /tmp/ids_
for part in /tmp/ids_0*; do JDG_TEST_LIMIT=290 ab_tests "configs_${part##*_}" $(cat "$part") & done >>/tmp/summary.txt
JDG_TEST_LIMIT=290 ab_tests dense tests/test_gpu_dense.py >>/tmp/summary.txt &
JDG_TEST_LIMIT=290 ab_tests grouped tests/test_gpu_grouped.py >>/tmp/summary.txt &
JDG_TEST_LIMIT=290 ab_tests diff tests/test_differentiable.py >>/tmp/summary.txt &
JDG_TEST_LIMIT=290 ab_tests nn tests/test_nn.py tests/test_remat.py tests/test_moe_expert_parallel.py \
  tests/test_nn_flax.py tests/test_nn_equinox.py >>/tmp/summary.txt &
wait; cat /tmp/summary.txt | tee $FINAL/summary.txt
OUT=$FINAL; tar czf $OUT/tests.tgz -C /tmp/tl . && rm -f $OUT/build.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
