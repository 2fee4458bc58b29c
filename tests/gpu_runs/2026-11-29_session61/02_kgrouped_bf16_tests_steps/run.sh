export OUT PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
cp "$0" $OUT/run.sh 2>/dev/null
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
# kernel times first (alone on the GPU): the MoE step's k-grouped rows and the benchmark's, f32 / bf16 out, no C
rows="16,7168,4096,1024 16,2048,7168,1024 4,4096,7168,8192 4,7168,2048,8192"
args=""; for r in $rows; do args="$args k_grouped_no_c=$r k_grouped_bf16=$r"; done
for round in 1 2; do timeout -k 5 100 python benchmarks/experiments/grouped_rows.py $args | sed "s/^/r$round /"; done \
  > $OUT/kgrouped_rows.txt 2>&1; cat $OUT/kgrouped_rows.txt | cut -c1-110
(cd benchmarks/experiments && XLA_PYTHON_CLIENT_PREALLOCATE=true timeout -k 5 200 python step_kernels.py moe_bf16 moe_bf16_wgrad_f32 moe_x_bf16 moe_x_bf16_wgrad_f32 moe > $OUT/step_kernels.txt 2>&1)
grep -E "^(moe|mlp)" $OUT/step_kernels.txt
for files in "grouped tests/test_gpu_grouped.py -k k_grouped" "lower tests/test_cuda_lowering.py tests/test_cuda_lowering_grouped.py tests/test_grouped.py tests/test_batching.py" \
             "diff tests/test_differentiable.py" \
             "nn tests/test_nn.py tests/test_remat.py tests/test_moe_expert_parallel.py tests/test_nn_flax.py tests/test_nn_equinox.py"; do
  set -- $files; name=$1; shift
  { timeout -k 5 240 python -I -m pytest "$@" -q -rs -p no:cacheprovider > "$OUT/tests_$name.log" 2>&1
    echo "$name: $(tail -1 "$OUT/tests_$name.log")"; grep -E "^FAILED|^ERROR" "$OUT/tests_$name.log" | head -5; } &
done
wait
date -u >> $OUT/machine.txt
