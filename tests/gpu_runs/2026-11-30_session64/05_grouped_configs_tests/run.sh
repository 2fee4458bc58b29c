# Session 64 call 5: HEAD (eed721a)'s headers: test_gpu_grouped.py's contiguous, ragged and masked cases, and
# test_gpu_configs.py's dense (with C, both outputs), contiguous, ragged, masked and multicast-B-with-C cases, 8 processes.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup; cp .run5.sh "$OUT/run.sh"
{ python -I -m pytest tests/test_gpu_grouped.py -k "not k_grouped" --collect-only -q -p no:cacheprovider
  python -I -m pytest tests/test_gpu_configs.py -k "test_dense or test_ragged or test_masked or test_contiguous or multicast_b_with_c" \
    --collect-only -q -p no:cacheprovider; } 2>/dev/null | grep "::" | grep -v "k_grouped\|store_widths\|split\|tma_store\|tail" >/tmp/t_ids.txt
wc -l </tmp/t_ids.txt; cp /tmp/t_ids.txt "$OUT/ids.txt"
rm -f /tmp/t_ids_*; split -n r/8 -d /tmp/t_ids.txt /tmp/t_ids_
export DG_JIT_CACHE_DIR=/tmp/jdg64
for part in /tmp/t_ids_0*; do JDG_TEST_LIMIT=$((360 - (SECONDS - start))) ab_tests "t_${part##*_}" $(cat "$part") & done; wait
rm -f "$OUT/build.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls tests_*.log) && rm -f "$OUT"/tests_*.log
echo "done $((SECONDS - start)) s"; date -u >>"$OUT/machine.txt"
