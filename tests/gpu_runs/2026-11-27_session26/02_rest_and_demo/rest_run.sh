#!/usr/bin/env bash
# one-off: the configs_64 / configs_128 cases from the 100th on (the par call cut them), 3 processes each, then the demo
set -uo pipefail
export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/machine.txt; date -u >> $OUT/machine.txt
python -m pip install -q --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
for bm in bm64 bm128; do
  python -I -m pytest tests/test_gpu_configs.py -k "not tma_store and $bm" --collect-only -q -p no:cacheprovider 2>/dev/null | grep '::' > $OUT/ids_$bm.txt
  tail -n +100 $OUT/ids_$bm.txt > /tmp/rest_$bm.txt
  split -n l/3 /tmp/rest_$bm.txt /tmp/rest_${bm}_
done
wc -l $OUT/ids_*.txt
for f in /tmp/rest_bm*_a?; do
  n=$(basename $f)
  ( timeout -k 5 330 python -I -m pytest $(cat $f) -q -p no:cacheprovider > $OUT/$n.log 2>&1; echo "$n: $(tail -1 $OUT/$n.log)" ) &
done
wait
timeout -k 5 240 python -m jax_deepgemm demo > $OUT/demo.log 2>&1; echo demo rc $?
tail -12 $OUT/demo.log
