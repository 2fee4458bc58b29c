set -u; export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
# the six table masked shapes over six draws, the model's picks, two rounds
for round in 1 2; do
  JDG_SHAPES=0,1,2,3,4,5 timeout -k 5 150 python benchmarks/experiments/masked_draws.py 6 2>&1 | grep -E " us |rror" |
    sed "s/^/r$round | /"
done | tee $OUT/masked_draws.txt
date -u >> $OUT/machine.txt
