set -u; export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
python -m pip install -q .whl/*.whl
mkdir -p $OUT/eager $OUT/oracle2
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/machine.txt; date -u >> $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
python -m jax_deepgemm info >> $OUT/machine.txt 2>&1
timeout 150 python benchmarks/experiments/eager_and_explicit.py > $OUT/eager/eager_explicit.log 2>&1
tail -25 $OUT/eager/eager_explicit.log
OUT=$OUT/oracle2 timeout 420 bash benchmarks/experiments/dense_tile_oracle.sh second > $OUT/oracle2/summary.txt 2>&1
(cd $OUT/oracle2 && tar czf configs.tgz configs_*.txt && rm configs_*.txt)
tail -60 $OUT/oracle2/summary.txt; date -u >> $OUT/machine.txt
