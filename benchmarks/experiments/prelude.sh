# Sourced by the experiment scripts (`. "$(dirname "$0")/prelude.sh"`): strict mode, the log folder $OUT (the device
# tool's result folder; ./gpu-out elsewhere), the environment every run shares, and the machine's GPU in
# $OUT/machine.txt. `build` installs the package in place (after a script's patch, where it applies one).
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/jdg-cache XLA_PYTHON_CLIENT_PREALLOCATE=false
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } >"$OUT/machine.txt" 2>&1
build() {
  python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
}
# `ab VAR VALUE command...`: two rounds of the command, alternating the environment without VAR and with VAR=VALUE
# (one build, so that both sides run the same binaries); each run is headed by a "# round R, VAR=..." line.
ab() {
  local var=$1 value=$2 round side
  shift 2
  for round in 1 2; do
    for side in unset "$value"; do
      echo "# round $round, $var=$side"
      if [ "$side" = unset ]; then env -u "$var" timeout -k 5 100 "$@"; else env "$var=$side" timeout -k 5 100 "$@"; fi
    done
  done
}
# `moe_contiguous_rounds LOG LABEL SETTING LAYER...`: moe_models.py's contiguous rows of the layers (name=G,R,N,K),
# two rounds, alternating the default with the environment SETTING (e.g. DG_TUNE_BLOCK_M=128) run as LABEL; lines
# appended to $OUT/LOG.
moe_contiguous_rounds() {
  local log=$1 label=$2 setting=$3 round run
  shift 3
  for round in 1 2; do
    for run in default "$label"; do
      local env=()
      [ "$run" = "$label" ] && env=("$setting")
      env "${env[@]}" timeout -k 5 150 python benchmarks/experiments/moe_models.py "$run$round" --contiguous-only "$@" \
        2>&1 | grep -vE "^(W|I)[0-9]{4}|absl" | tee -a "$OUT/$log"
    done
  done
}
# `patch_rounds PATCH RUN ARG...`: the sent tree's ffi/heuristics.cc against it with PATCH applied (host code: the
# package rebuilt for each side), two rounds, the sides alternating; each side runs `RUN LABEL ARG...` (LABEL: newR /
# oldR), its lines appended to $OUT/rows.txt.
patch_rounds() {
  local patch=$1 run=$2 round side
  shift 2
  git apply --check "$patch" || { echo "$(basename "$patch") does not apply"; exit 1; }
  cp ffi/heuristics.cc /tmp/heuristics_old.cc  # (the sent tree's, which the device copy's git HEAD may not be)
  for round in 1 2; do
    for side in new old; do
      cp /tmp/heuristics_old.cc ffi/heuristics.cc
      [ "$side" = new ] && git apply "$patch"
      build
      "$run" "$side$round" "$@" 2>&1 | grep -vE "^(W|I)[0-9]{4}|absl" | tee -a "$OUT/rows.txt"
    done
  done
  cp /tmp/heuristics_old.cc ffi/heuristics.cc
}
# `heuristics_patch_rounds PATCH LAYER...`: patch_rounds over moe_models.py's ragged rows of the layers (name, or
# name=G,R,N,K).
ragged_rows() { timeout -k 5 130 python benchmarks/experiments/moe_models.py "$1" --ragged-only "${@:2}"; }
heuristics_patch_rounds() { patch_rounds "$1" ragged_rows "${@:2}"; }
# `parallel_tests FILE...`: the GPU tests of the files in 8 processes (the test ids dealt round robin), logs under
# $OUT/logs; prints each process's summary line, the failures and the devices the processes saw. PYTEST: the command
# (default `python -m pytest`; `python -P -m pytest` from the repository root under ab_side.sh's `side`, so that the
# side's package, not the source tree, is imported).
parallel_tests() {
  mkdir -p "$OUT/logs"
  local d f
  d=$(mktemp -d)
  ${PYTEST:-python -m pytest} "$@" --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" > "$d/all"
  split -n r/8 -d "$d/all" "$d/ids_"
  for f in "$d"/ids_*; do
    ( mapfile -t c < "$f"; timeout -k 5 240 ${PYTEST:-python -m pytest} "${c[@]}" -q -rfs -p no:cacheprovider \
        > "$OUT/logs/tests_${f##*_}.log" 2>&1 ) &
  done; wait
  echo "tests: $(wc -l < "$d/all") cases"
  rm -r "$d"
  for f in "$OUT"/logs/tests*.log; do echo "$(basename "$f"): $(tail -1 "$f")"; done
  grep -h -E "^FAILED|^ERROR|default device" "$OUT"/logs/tests*.log | sort | uniq -c | head -20
}
