set -u; export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
python -m pip install -q .whl/*.whl
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/machine.txt; date -u >> $OUT/machine.txt
python -m pip install --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
split -n r/4 -d par3_rest.txt /tmp/rest_
for ids in /tmp/rest_*; do
  ( mapfile -t cases < $ids; timeout -k 5 ${TL:-400} python -I -m pytest "${cases[@]}" -q -rs -p no:cacheprovider --durations=5 > $OUT/rest_${ids##*_}.log 2>&1 ) &
done
wait; date -u >> $OUT/machine.txt
for f in $OUT/rest_*.log; do echo "== $f"; tail -12 $f; done
