# The sanitize phase's runs, sourced by tools/gpu_session.sh (tests/test_sanitize_runs.py runs them with a fake
# sanitizer on the CPU). The caller sets CS (the compute-sanitizer binary), OUT (the log folder), sanitizer_args (more
# sanitizer options, word-split) and defines `quiet` (a filter of the logs).

# `sanitize_part TOOL IDS_FILE LIMIT`: the sanitizer over the test ids in IDS_FILE, log in $OUT/TOOL.log_<part>.
# Into a file, not a pipe: `timeout` kills the sanitizer only, and its python, left running, would hold a pipe open
# past the device call's limit (2026-11-27); that python is killed afterwards, found by this part's own --basetemp
# (the other parts run beside it). The sanitizer's own process often ends on SIGSEGV with no report, even on a plain
# JAX program that never imports this package (NOTES 68, 83, 114); then it starts again on this part's cases not
# yet passed, while time is left and fewer than 20 runs in a row have passed none. Some cases crash it nearly every
# time: the case a crash cut short goes to the end of the list, so that it no longer keeps the others from running
# (one such case, first in line, took 20 runs of a part in session 72).
sanitize_part() {
  local tool=$1 ids=$2 part=${2##*_} cases before running status=- runs=0 idle=0 deadline=$((SECONDS + $3))
  local log="$OUT/$tool.log_$part" tmp="/tmp/jdg-sanitize-$tool-$part"
  mapfile -t cases <"$ids"  # one test id per line
  : >"$log"
  while [ "${#cases[@]}" -gt 0 ]; do
    runs=$((runs + 1))
    # shellcheck disable=SC2086  # (sanitizer_args: the phase's sanitizer options, word-split on purpose)
    timeout -k 5 $((deadline - SECONDS)) "$CS" --tool "$tool" --error-exitcode 1 $sanitizer_args \
      python -I -m pytest "${cases[@]}" \
      -v -p no:cacheprovider --basetemp="$tmp" >"$log.raw" 2>&1
    status=$?
    pkill -9 -f -- "--basetemp=$tmp" || true
    { echo "# sanitizer run $runs of part $part: exit $status"; quiet <"$log.raw"; } >>"$log"
    # (-v prints a case's id when it starts and its outcome on the same line when it ends)
    running=$(grep -oE "^tests/[^ ]+( +(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS))?" "$log.raw" | tail -1)
    rm -f "$log.raw"
    # 139: the tool's SIGSEGV (124 / 137 are the time limit; 1 an error it found or a failed test)
    before=${#cases[@]}
    mapfile -t cases < <(printf '%s\n' "${cases[@]}" |
                         grep -vxF -f <(grep -oE "^tests/[^ ]+ PASSED" "$log" | cut -d" " -f1))
    if [ "$status" = 139 ] && [ "$running" = "${running%% *}" ] &&
       printf '%s\n' "${cases[@]}" | grep -qxF -- "$running"; then
      mapfile -t cases < <(printf '%s\n' "${cases[@]}" | grep -vxF -- "$running"; printf '%s\n' "$running")
    fi
    if [ "${#cases[@]}" -lt "$before" ]; then idle=0; else idle=$((idle + 1)); fi
    [ "$status" = 139 ] && [ "$idle" -lt 20 ] && [ $((deadline - SECONDS)) -gt 30 ] || break
  done
  echo "$tool part $part: exit $status after $runs sanitizer run(s), ${#cases[@]} case(s) not passed"
}

# `sanitize_summary TOOL`: what $OUT/TOOL.log (every part's runs) holds against $OUT/TOOL.ids (the cases selected):
# cases passed, runs, each kind of run summary, and the report lines. "process didn't terminate successfully" is the
# tool saying that its python ended abnormally (a SIGSEGV, often after every case of the run had passed): counted
# apart, since it names no access and no kernel (a case it cut short is counted as not passed).
sanitize_summary() {
  local tool=$1 log="$OUT/$1.log" pattern="^========= (Invalid|Error|Race|Warning|Program hit)|SUMMARY: [1-9]"
  local ended="process didn't terminate successfully" passed
  passed=$(grep -oE "^tests/[^ ]+ PASSED" "$log" | sort -u | wc -l)
  echo "$tool: $passed of the $(wc -l <"$OUT/$tool.ids") selected cases passed under the sanitizer" \
       "($(grep -c "^# sanitizer run" "$log") sanitizer runs)"
  # (each run's summary once per kind; the pytest lines of runs with a failure or an error)
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | sort | uniq -c
  grep -E "^=+ [0-9].*(failed|error)" "$log" | head -5
  # A report in a run that the tool's crash then ended would be in no summary.
  echo "$tool: $(grep -E "$pattern" "$log" | grep -cvF "$ended") report line(s) over all runs"
  grep -E "$pattern" "$log" | grep -vF "$ended" | head -5
  echo "$tool: $(grep -cF "$ended" "$log") run(s) whose python ended abnormally (no access reported)"
}

# `sanitizer_probe TOOL`: the positive control of tools/sanitizer_probe.cu under TOOL with $sanitizer_args, one
# process per kernel; prints how many report lines name each. A filter that selects this package's kernels shows
# reports for jdg_sanitizer_probe and none for sanitizer_probe_other (without a filter, both). Built with nvcc where
# the GPU machine has one, else the binary carried as tools/sanitizer_probe.bin (git-ignored).
sanitizer_probe() {
  local tool=$1 fault=race bin=tools/sanitizer_probe.bin kernel
  local -A reports
  [ "$tool" = memcheck ] && fault=oob
  if command -v nvcc >/dev/null; then
    nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 tools/sanitizer_probe.cu -o "$bin" ||
      { echo "$tool probe: nvcc failed: the filter is unchecked"; return; }
  fi
  [ -x "$bin" ] || { echo "$tool probe: no nvcc and no $bin: the filter is unchecked"; return; }
  for kernel in jdg other; do
    # shellcheck disable=SC2086
    timeout -k 5 60 "$CS" --tool "$tool" $sanitizer_args "$bin" "$fault" "$kernel" \
      >"$OUT/$tool.probe_$kernel.log" 2>&1
    reports[$kernel]=$(grep -cE "^========= .*(jdg_sanitizer_probe|sanitizer_probe_other)" \
                       "$OUT/$tool.probe_$kernel.log")
  done
  echo "$tool probe (${sanitizer_args:-no filter}): report lines naming the faulty kernel: ${reports[jdg]} for" \
       "jdg_sanitizer_probe, ${reports[other]} for sanitizer_probe_other"
  [ "${reports[jdg]}" -gt 0 ] || echo "$tool probe: NOT REPORTED: these options may instrument none of the kernels"
}
