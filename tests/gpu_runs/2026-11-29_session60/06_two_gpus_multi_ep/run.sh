export OUT PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
cp "$0" $OUT/run.sh 2>/dev/null
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; nvidia-smi -L; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
timeout -k 5 240 python -I -m pytest tests/test_multi_gpu.py -q -rs -p no:cacheprovider > $OUT/multi.log 2>&1; tail -3 $OUT/multi.log
(cd benchmarks/experiments && XLA_PYTHON_CLIENT_PREALLOCATE=true timeout -k 5 150 python step_kernels.py moe moe_weights_after moe_ep > $OUT/step_kernels.txt 2>&1)
grep -E "^(moe|mlp)" $OUT/step_kernels.txt
XLA_PYTHON_CLIENT_PREALLOCATE=true timeout -k 5 150 python -m jax_deepgemm demo > $OUT/demo.log 2>&1; tail -8 $OUT/demo.log
date -u >> $OUT/machine.txt
