export OUT PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
cp "$0" $OUT/run.sh 2>/dev/null
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
# k-grouped bf16 out: register stores (DG_TUNE_TMA_STORE=0, 4 stages) against the TMA store (default now, 3 stages)
args=""; for r in 16,7168,4096,1024 16,2048,7168,1024 4,4096,7168,8192 4,7168,2048,8192; do args="$args k_grouped_bf16=$r"; done
for round in 1 2; do for t in 0 1; do
  DG_TUNE_TMA_STORE=$t DG_PRINT_CONFIGS=1 timeout -k 5 100 python benchmarks/experiments/grouped_rows.py $args 2>&1 |
    grep -E " us |rror|k_grouped m=" | sed "s/^/tma$t r$round /"
done; done > $OUT/tma_rows.txt; grep " us " $OUT/tma_rows.txt | cut -c1-100
timeout -k 5 300 python -I -m pytest tests/test_gpu_configs.py -k "tma_store_k_grouped" -q -rs -p no:cacheprovider > $OUT/tests_configs.log 2>&1 &
timeout -k 5 300 python -I -m pytest tests/test_gpu_grouped.py -q -rs -p no:cacheprovider > $OUT/tests_grouped.log 2>&1 &
wait; for f in $OUT/tests_*.log; do echo "$f: $(tail -1 $f)"; grep -E "^FAILED|^ERROR" $f | head -5; done
date -u >> $OUT/machine.txt
