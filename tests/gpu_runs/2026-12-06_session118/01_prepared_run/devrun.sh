set -u; export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
python -m pip install -q .whl/*.whl
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/machine.txt; date -u >> $OUT/machine.txt
git rev-parse HEAD >> $OUT/machine.txt 2>/dev/null
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
python -m jax_deepgemm info >> $OUT/machine.txt 2>&1
export XLA_PYTHON_CLIENT_MEM_FRACTION=0.15
T="timeout ${TL:-270} python -I -m pytest -q -rs -p no:cacheprovider"
$T tests/test_differentiable.py > $OUT/t_diff.log 2>&1 &
$T tests/test_nn.py tests/test_remat.py tests/test_batching.py tests/test_moe_expert_parallel.py tests/test_typing.py > $OUT/t_nn.log 2>&1 &
$T tests/test_export.py tests/test_cuda_lowering.py > $OUT/t_export.log 2>&1 &
$T tests/test_control_flow.py tests/test_jax_modes.py tests/test_sharding.py > $OUT/t_cf.log 2>&1 &
$T tests/test_gpu_dense.py -k overwrite_c > $OUT/t_overwrite.log 2>&1 &
timeout ${TL:-270} python benchmarks/experiments/eager_and_explicit.py > $OUT/eager_explicit.log 2>&1 &
wait
cat $OUT/machine.txt; for f in $OUT/t_*.log $OUT/eager_explicit.log; do echo "== $f"; tail -8 $f; done
