# session 58 call 3: the MoE step's optimized HLO (to name the XLA fusions step_kernels.py times), gzipped
export DG_JIT_CACHE_DIR=/tmp/jdg-cache PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $OUT/machine.txt; cat $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd benchmarks/experiments && XLA_FLAGS="--xla_dump_to=/tmp/hlo --xla_dump_hlo_as_text" timeout -k 5 200 python step_kernels.py moe 2>&1 | grep -v "^E[0-9]" > $OUT/step_kernels.txt)
head -30 $OUT/step_kernels.txt
ls -S /tmp/hlo | head -5
f=$(ls -S /tmp/hlo/*after_optimizations.txt | head -1); echo $f; gzip -c $f > $OUT/moe_after_optimizations.txt.gz
f=$(ls -S /tmp/hlo/*before_optimizations.txt | head -1); gzip -c $f > $OUT/moe_before_optimizations.txt.gz
ls -la $OUT
