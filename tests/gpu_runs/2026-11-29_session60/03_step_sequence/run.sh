export OUT PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
cp "$0" $OUT/run.sh 2>/dev/null
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
mkdir -p $OUT/hlo
(cd benchmarks/experiments && XLA_PYTHON_CLIENT_PREALLOCATE=true timeout -k 5 150 python step_kernels.py --sequence $OUT/hlo moe moe_x > $OUT/step_kernels.txt 2>&1)
grep -E "^(moe|mlp)" $OUT/step_kernels.txt
gzip $OUT/hlo/*.txt
date -u >> $OUT/machine.txt
