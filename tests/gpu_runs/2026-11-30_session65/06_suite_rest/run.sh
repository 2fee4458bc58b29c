# Session 65 call 6 (tree 56239ad): the rest of the GPU suite at these kernels: session 64's 05_ configs cases (dense with C,
# contiguous, ragged, masked, multicast B with C), test_gpu_dense.py, test_gpu_grouped.py, test_differentiable.py
# (.ids6.txt) in 10 processes.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup; cp .run6.sh "$OUT/run.sh"; cp .ids6.txt "$OUT/ids.txt"
export DG_JIT_CACHE_DIR=/tmp/jdg65
rm -f /tmp/t_ids_*; split -n r/10 -d .ids6.txt /tmp/t_ids_
for part in /tmp/t_ids_0*; do JDG_TEST_LIMIT=$((320 - (SECONDS - start))) ab_tests "c_${part##*_}" $(cat "$part") & done
wait
echo "tests done $((SECONDS - start)) s"
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log) && rm -f "$OUT"/*.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
