# Which kernels the sanitizer's crashes go with: one case that crashed it repeatedly (NOTES 114) under memcheck with
# every kernel instrumented, with ours (jdg_*) excluded, and with only ours, two runs each.
set -u
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
date -u > "$OUT/machine.txt"; nvidia-smi --query-gpu=name,driver_version --format=csv >> "$OUT/machine.txt"
python -m pip install --no-build-isolation -e . > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
"$CS" --version | tail -1 >> "$OUT/machine.txt"
case_id="tests/test_grouped.py::test_grad_through_ragged_wrt_lhs_scale"
timeout 120 python -I -m pytest "$case_id" -q -p no:cacheprovider 2>&1 | tail -2  # fills the kernel cache
for mode in all exclude_jdg only_jdg; do
  case $mode in
    all) filt=() ;;
    exclude_jdg) filt=(--kernel-name-exclude kns=jdg) ;;
    only_jdg) filt=(--kernel-name kns=jdg) ;;
  esac
  for run in 1 2; do
    timeout -k 5 50 "$CS" --tool memcheck "${filt[@]}" --error-exitcode 1 python -I -m pytest "$case_id" -q \
      -p no:cacheprovider > "$OUT/${mode}_$run.log" 2>&1
    echo "$mode run $run: exit $? ($(grep -E "passed|failed|ERROR SUMMARY" "$OUT/${mode}_$run.log" | tr '\n' ' '))"
  done
done
