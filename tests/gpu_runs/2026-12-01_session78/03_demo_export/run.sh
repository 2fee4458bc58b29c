#!/usr/bin/env bash
# session 78, call 3: the demo with the rowwise per-token quantization kernel (HEAD's tree), and test_export.py on the
# GPU (an exported fp8_dot gradient holds the new calls)
set -u
cp .run3.sh "$OUT/run.sh"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/c3
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
python -m pip install --no-build-isolation -e . > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
T build
timeout -k 5 90 python -I -m pytest tests/test_export.py -q -rs -p no:cacheprovider 2>&1 | grep -v -E "^E[0-9]{4}" | tail -8 | tee $OUT/tests.txt
T tests
timeout -k 5 280 python -m jax_deepgemm demo 2>&1 | grep -v -E "^E[0-9]{4}|^W[0-9]{4}" | tee $OUT/demo.txt
T demo
