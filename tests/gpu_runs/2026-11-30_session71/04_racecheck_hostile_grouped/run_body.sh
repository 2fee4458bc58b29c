# TOOL (memcheck | racecheck) over the cases of test_hostile_data.py and test_grouped.py that -k "$K" selects,
# with the kernels, 5 sanitizer processes in parallel; one whose sanitizer crashes (SIGSEGV, exit 139) starts again on its cases not yet passed.
set -u
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
date -u > "$OUT/machine.txt"; nvidia-smi --query-gpu=name,driver_version --format=csv >> "$OUT/machine.txt"
python -m pip install --no-build-isolation -e . > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
python -I -m pytest tests/test_hostile_data.py tests/test_grouped.py --collect-only -q -p no:cacheprovider -k "$K" 2>/dev/null |
  grep "::" > "$OUT/ids.txt"
split -n r/5 -d "$OUT/ids.txt" "$OUT/ids_"
for f in "$OUT"/ids_*; do
  ( n=${f##*_}; mapfile -t cases < "$f"; deadline=$((SECONDS + ${LIMIT:-400})); run=0
    while :; do
      run=$((run + 1))
      timeout -k 5 $((deadline - SECONDS)) "$CS" --tool "$TOOL" --error-exitcode 1 python -I -m pytest "${cases[@]}" \
        -v -p no:cacheprovider > "$OUT/mem_${n}_$run.log" 2>&1
      st=$?
      echo "$n run $run: exit $st, $(grep -cE " PASSED" "$OUT/mem_${n}_$run.log") passed of ${#cases[@]}"
      [ "$st" = 139 ] && [ $((deadline - SECONDS)) -gt 30 ] || break
      mapfile -t cases < <(comm -23 <(printf '%s\n' "${cases[@]}" | sort) \
        <(grep -ohE "^tests/[^ ]+ PASSED" "$OUT"/mem_${n}_*.log | cut -d' ' -f1 | sort))
      [ ${#cases[@]} -gt 0 ] || break
    done ) &
done
wait
pkill -9 -f "pytest" || true
echo "cases: $(wc -l < "$OUT/ids.txt"), passed under $TOOL: $(grep -ohE "^tests/[^ ]+ PASSED" "$OUT"/mem_*.log | sort -u | wc -l)"
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|^========= (Race|Warning)|^========= (Invalid|Error|Program hit)|FAILED" "$OUT"/mem_*.log | sort | uniq -c | head -20
tar czf "$OUT/mem_logs.tgz" -C "$OUT" $(cd "$OUT" && ls mem_*.log) && rm "$OUT"/mem_*.log "$OUT"/ids_*
