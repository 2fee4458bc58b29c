set -uo pipefail
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache-nn
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/machine.txt; date -u | tee -a $OUT/machine.txt
python -m pip install -q --no-build-isolation -e . > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
python -c "import flax, equinox" 2>/dev/null && echo "flax, equinox: on the machine" || { export PYTHONPATH=$PWD/.gl/nnpkgs; echo "flax, equinox: carried"; }
python -P -c "import sys; sys.path.insert(0, 'tests'); import conftest, flax, equinox; print('kernels_active', conftest.kernels_active(), flax.__version__, equinox.__version__)" 2>&1 | tail -1
t() { n=$1; shift; timeout -k 5 230 python -P -m pytest "$@" -q -rs -p no:cacheprovider 2>&1 | grep -v -E "^E[0-9]{4} |^$" > $OUT/$n.log; echo "$n: $(tail -1 $OUT/$n.log)"; grep -E "^FAILED|^ERROR" $OUT/$n.log | head -8; }
t batching tests/test_batching.py &
t nn tests/test_nn.py tests/test_nn_equinox.py &
t flax tests/test_nn_flax.py &
wait
