set -u
JDG_SANITIZE_FILES="tests/test_transposed_cast.py tests/test_hostile_data.py" \
  JDG_SANITIZE_K="test_transposed_cast and not bad_input or ragged_dot_garbage_sizes" \
  JDG_SANITIZE_ARGS="--kernel-name kns=jdg" \
  JDG_SANITIZE_PROCS=6 JDG_SANITIZE_LIMIT=200 bash tools/gpu_session.sh sanitize racecheck memcheck 2>&1 | tee "$OUT/sanitize.txt"
# the probe without a filter: both kernels reported
mkdir -p "$OUT/unfiltered"
for tool in racecheck memcheck; do
  fault=race; [ $tool = memcheck ] && fault=oob
  for k in jdg other; do
    compute-sanitizer --tool $tool tools/sanitizer_probe.bin $fault $k > "$OUT/unfiltered/$tool.probe_$k.log" 2>&1
    echo "unfiltered $tool $k: $(grep -cE "^========= .*(jdg_sanitizer_probe|sanitizer_probe_other)" "$OUT/unfiltered/$tool.probe_$k.log")"
  done
done
command -v nvcc || echo "no nvcc on the device"
cp .run3.sh "$OUT/run.sh"
