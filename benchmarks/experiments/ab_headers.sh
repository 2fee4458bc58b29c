# Same-run A/B of two sets of kernel headers (cuda/), sourced by the A/B scripts: the package reads cuda/ at JIT
# time, so swapping the folder swaps the kernel (each side with its own kernel cache). Run from the repo root.
#   ab_setup                  $OUT, the environment, the build (log in $OUT/build.log), machine.txt; sets `start`
#   ab_patched PATCH          apply PATCH to the device's copy unless the tree has it already (exits if neither)
#   ab_patch_vs_head PATCH    ab_setup, ab_patched PATCH, ab_prepare: side new = the headers as sent + PATCH (in
#                             cuda/), old = as sent (not the device copy's git HEAD, which may lag)
#   ab_prepare [OLD_DIR]      new = the working tree's cuda/, old = OLD_DIR (a copy sent along: the device copy's
#                             git history may lag, and did in session 17) or HEAD's; the difference goes to
#                             $OUT/ab_change.diff
#   ab_prepare_from OLD       ab_prepare with side old = the headers of OLD: a folder (sent along in the tree) or a
#                             commit (git archive; fails where the device copy's history lacks it)
#   ab_sent                   side old = the headers as sent (the device copy's git history may lag)
#   ab_reversed PATCH         ab_setup; side new = the headers as sent (which hold PATCH), old = them with PATCH
#                             reversed; leaves side old in cuda/
#   ab_side NAME PATCH        side NAME = the headers as sent with PATCH applied (after ab_sent; diff in
#                             $OUT/ab_NAME.diff; leaves side old in cuda/)
#   ab_use SIDE               put that side's headers in cuda/ (ab_use new when done)
#   ab_dense ROUNDS SHAPES    dense_rows.py on M,N,K shapes, the sides alternating, lines prefixed "side rR"
#   ab_env_rows ROUNDS SHAPES SIDE...   dense_rows.py on M,N,K shapes (one string) with one build, each SIDE "name
#                             VAR=VALUE ..." (DG_TUNE_* settings; a bare name: none) in turn per round; lines
#                             prefixed "name rR" (also in $OUT/rows.txt), each run's configurations in
#                             $OUT/configs_name_rR.txt
#   ab_grouped KINDS          grouped_rows.py once per side per round, lines prefixed "side " ("side rR " with
#                             AB_ROUNDS)
#   ab_tests NAME ARGS...     pytest ARGS (with the headers in cuda/), log $OUT/tests_NAME.log, its summary printed
#   ab_split_tests NAME IDS N LIMIT   ab_tests over the test ids in file IDS, split among N processes of LIMIT seconds
#                             (logs $OUT/tests_NAME_NN.log)
#   ab_side_tests SIDE EXPR N LIMIT FILES...   the cases of FILES that pytest's -k EXPR selects (their count printed)
#                             with that side's headers and kernel cache, split among N processes of LIMIT seconds
#                             (logs $OUT/tests_SIDE_NN.log; AB_TESTS_NAME for another name than SIDE)
#   ab_kgrouped_tests NAME LIMIT   the k-grouped cases of test_gpu_grouped.py and test_gpu_configs.py with side new's
#                             headers, in 4 processes of LIMIT seconds (logs $OUT/tests_NAME_0*.log)
#   ab_ragged_masked PATCH tests|rows LABEL KINDS LAYERS...   HEAD + PATCH against HEAD for ragged and masked
#                             kernels: `tests`, their GPU tests (test_gpu_configs.py's 102 cases in four processes:
#                             ~90 s, against ~5 min in one); `rows`, two rounds: ragged 128 x 192 on one dense
#                             problem (dense_as_grouped.py), moe_models.py's LAYERS (ragged, masked decode) as LABEL,
#                             grouped_rows.py's KINDS
#   ab_ncu METRICS OP SHAPES...   Nsight Compute's METRICS (comma-separated) of one launch of tools/profile_one.py OP
#                             SHAPE per side (AB_SIDES) and shape, clocks free; lines prefixed "side shape | "
#   ab_run_side LABEL SIDE LIMIT SCRIPT [ARGS...] -- [VAR=VALUE...]   SCRIPT's timed lines (" us ") with SIDE's
#                             headers and kernel cache and the DG_TUNE_* settings, prefixed "LABEL " (also in
#                             $OUT/rows.txt), cut after LIMIT seconds
#   ab_side_rounds ROUNDS LIMIT SCRIPT [ARGS...]   ab_run_side over AB_SIDES, ROUNDS times, labels "side rR"
#   ab_sanitize SELECTION     racecheck and memcheck (tools/gpu_session.sh sanitize, which builds the tree as it is:
#                             the headers in cuda/) of the GPU tests pytest's -k SELECTION picks, JDG_SANITIZE_LIMIT
#                             seconds per process (default 160)
#   ab_pack                   the end time into machine.txt; $OUT's *.log and *.diff into logs.tgz (the device
#                             returns 8 files), whichever of them exist
# The sides: AB_SIDES (default "new old"), in that order; ab_dense and ab_grouped leave the first one in cuda/.
ab_setup() {
  OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
  export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
  start=$SECONDS
  python -m pip install -q --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
  { date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
}
ab_patched() {
  git apply --check -R "$1" 2>/dev/null && return 0
  git apply "$1" || { echo "$1 does not apply"; exit 1; }
}
ab_patch_vs_head() {
  ab_setup
  rm -rf /tmp/ab_sent_cuda && cp -r cuda /tmp/ab_sent_cuda
  ab_patched "$1"
  ab_prepare /tmp/ab_sent_cuda
  ab_use new
}
ab_prepare() {
  rm -rf /tmp/ab_new_cuda /tmp/ab_old_cuda && cp -r cuda /tmp/ab_new_cuda
  if [ -n "${1:-}" ]; then cp -r "$1" /tmp/ab_old_cuda; else git checkout -q HEAD -- cuda && cp -r cuda /tmp/ab_old_cuda; fi
  rm -rf cuda && cp -r /tmp/ab_new_cuda cuda
  diff -r /tmp/ab_old_cuda /tmp/ab_new_cuda >"$OUT/ab_change.diff"
}
ab_prepare_from() {
  rm -rf /tmp/ab_from && mkdir -p /tmp/ab_from
  if [ -d "$1" ]; then cp -r "$1" /tmp/ab_from/cuda; else git archive "$1" cuda | tar -x -C /tmp/ab_from; fi
  [ -d /tmp/ab_from/cuda ] || { echo "no headers at $1"; exit 1; }
  ab_prepare /tmp/ab_from/cuda
}
ab_sent() { rm -rf /tmp/ab_old_cuda && cp -r cuda /tmp/ab_old_cuda; }
ab_reversed() {
  ab_setup
  rm -rf /tmp/ab_new_cuda && cp -r cuda /tmp/ab_new_cuda
  git apply -R "$1" || { echo "$1 does not reverse"; exit 1; }
  ab_sent
}
ab_patch_sides() {  # patch: side new = HEAD's headers where they already hold it (old = them with it reversed), else
  # new = the headers + the patch (old = them as sent)
  if git apply --check -R "$1" 2>/dev/null; then ab_reversed "$1" && ab_use new; else ab_patch_vs_head "$1"; fi
}
ab_side() {  # name, patch
  rm -rf "/tmp/ab_$1_cuda"; ab_use old
  git apply "$2" || return 1
  cp -r cuda "/tmp/ab_$1_cuda"; diff -r /tmp/ab_old_cuda "/tmp/ab_$1_cuda" >"$OUT/ab_$1.diff"; ab_use old
}
ab_use() { rm -rf cuda && cp -r "/tmp/ab_$1_cuda" cuda; }
ab_run_side() {
  local label=$1 side=$2 limit=$3 args=(); shift 3
  while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  ab_use "$side"
  env "$@" DG_JIT_CACHE_DIR="/tmp/ab_cache_$side" timeout -k 5 "$limit" python "${args[@]}" 2>&1 |
    grep -E " us |rror" | sed "s/^/$label /" | tee -a "$OUT/rows.txt"
}
ab_side_rounds() {  # rounds, time limit, script, its arguments
  local rounds=$1 limit=$2 round side; shift 2
  for round in $(seq "$rounds"); do for side in ${AB_SIDES:-new old}; do
    ab_run_side "$side r$round" "$side" "$limit" "$@"
  done; done
}
ab_sanitize() {
  JDG_SANITIZE_K="$1" JDG_SANITIZE_LIMIT=${JDG_SANITIZE_LIMIT:-160} \
    bash tools/gpu_session.sh sanitize racecheck memcheck
}
ab_pack() {
  date -u >>"$OUT/machine.txt"
  local files; files=$(cd "$OUT" && ls ./*.log ./*.diff 2>/dev/null)
  # shellcheck disable=SC2086  # file names without spaces (ours)
  [ -n "$files" ] && (cd "$OUT" && tar czf logs.tgz $files && rm -f $files)
  return 0
}
ab_rows() {  # rounds, "1" to tag lines with the round (or ""), time limit, script, its arguments
  local rounds=$1 tag=$2 limit=$3 script=$4 sides=${AB_SIDES:-new old}; shift 4
  for round in $(seq "$rounds"); do for v in $sides; do
    ab_use "$v"
    DG_JIT_CACHE_DIR=/tmp/ab_cache_$v timeout -k 5 "$limit" python "benchmarks/experiments/$script" "$@" 2>&1 |
      grep -E " us |rror" | sed "s/^/$v${tag:+ r$round} /"
  done; done
  ab_use "${sides%% *}"
}
ab_dense() { local rounds=$1; shift; ab_rows "$rounds" 1 100 dense_rows.py "$@"; }  # rounds, then the shapes
ab_env_rows() {  # rounds, shapes, sides
  local rounds=$1 shapes=$2 round spec name; shift 2
  for round in $(seq "$rounds"); do for spec in "$@"; do
    name=${spec%% *}
    # shellcheck disable=SC2086  # the shapes and the side's settings are word lists
    env ${spec#"$name"} DG_PRINT_CONFIGS=1 timeout -k 5 200 python benchmarks/experiments/dense_rows.py $shapes \
      2>"$OUT/configs_${name}_r$round.txt" | sed "s/^/$name r$round /" | tee -a "$OUT/rows.txt"
  done; done
}
ab_grouped() { ab_rows "${AB_ROUNDS:-1}" "${AB_ROUNDS:+1}" 150 grouped_rows.py "$@"; }  # the kinds grouped_rows.py takes
ab_tests() {  # name, pytest arguments
  local name=$1; shift
  # (without ab_setup's environment too: parallel processes that each preallocate the GPU's memory run out of it)
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 "${JDG_TEST_LIMIT:-280}" python -I -m pytest "$@" -q \
    -p no:cacheprovider >"$OUT/tests_$name.log" 2>&1
  local summary; summary=$(grep -E "[0-9]+ (passed|failed|skipped|errors?|deselected).* in [0-9.]+s" \
    "$OUT/tests_$name.log" | tail -1)
  # (a run cut by its limit prints no summary: count its progress dots and Fs instead)
  [ -n "$summary" ] || summary="cut by the ${JDG_TEST_LIMIT:-280} s limit after $(head -1 "$OUT/tests_$name.log" |
    tr -cd . | wc -c) passed, $(head -1 "$OUT/tests_$name.log" | tr -cd F | wc -c) failed"
  echo "$name: $summary"; grep -E "^FAILED" "$OUT/tests_$name.log" | head -5
}
ab_split_tests() {  # name, a file of test ids, processes, time limit: ab_tests over the ids split among processes
  # (no ids: say so; pytest given none would run the whole default collection)
  [ -s "$2" ] || { echo "$1: no test ids in $2"; return 1; }
  rm -f "/tmp/ab_split_$1_"*; split -n "r/$3" -d "$2" "/tmp/ab_split_$1_"
  local part cases
  for part in "/tmp/ab_split_$1_"*; do
    mapfile -t cases <"$part"  # one test id per line (some hold spaces)
    JDG_TEST_LIMIT=$4 ab_tests "$1_${part##*_}" "${cases[@]}" &
  done
  wait
}
ab_side_tests() {  # side, -k expression, processes, time limit, test files
  local side=$1 expr=$2 procs=$3 limit=$4 name=${AB_TESTS_NAME:-$1}; shift 4
  ab_use "$side"
  python -I -m pytest "$@" -k "$expr" --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" \
    >"/tmp/ab_ids_$name.txt"
  wc -l <"/tmp/ab_ids_$name.txt"
  DG_JIT_CACHE_DIR="/tmp/ab_cache_$side" ab_split_tests "$name" "/tmp/ab_ids_$name.txt" "$procs" "$limit"
}
ab_kgrouped_tests() {  # name, time limit: the k-grouped cases of the grouped and configs GPU files, side new, 4 processes
  AB_TESTS_NAME=$1 ab_side_tests new k_grouped 4 "$2" tests/test_gpu_grouped.py tests/test_gpu_configs.py
}
ab_ragged_masked() {  # patch, tests|rows, the moe_models.py label, the table's kinds ("contiguous masked"), layers...
  ab_patch_vs_head "$1"
  if [ "$2" = tests ]; then
    JDG_TEST_LIMIT=170 ab_tests grouped_ragged_masked_new tests/test_gpu_grouped.py -k "ragged or masked"
    python -I -m pytest tests/test_gpu_configs.py -k "ragged or masked" --collect-only -q -p no:cacheprovider \
      2>/dev/null | grep "::" >/tmp/config_ids.txt  # (the device tool returns 8 files at most)
    rm -f /tmp/config_ids_*
    split -n l/4 -d /tmp/config_ids.txt /tmp/config_ids_
    local part
    for part in /tmp/config_ids_0*; do
      JDG_TEST_LIMIT=200 ab_tests "configs_ragged_masked_new_${part##*_}" $(cat "$part") &
    done
    wait
    return
  fi
  local label=$3 kinds=$4
  shift 4
  DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 ab_rows 2 1 100 dense_as_grouped.py f192 8192,3072,4096 |
    tee -a "$OUT/dense_as_grouped.txt"
  ab_rows 2 1 150 moe_models.py "$label" "$@" --ragged-only --masked | tee -a "$OUT/moe_rows.txt"
  AB_ROUNDS=2 ab_grouped $kinds | tee -a "$OUT/table_rows.txt"
  echo "done in $((SECONDS - start)) s"
}
ab_ncu() {  # metrics, the profile_one.py op, then its shapes
  local metrics=$1 op=$2 side shape ncu; shift 2
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for side in ${AB_SIDES:-new old}; do
    ab_use "$side"
    for shape in "$@"; do
      JDG_PROFILE_RUNS=1 DG_JIT_CACHE_DIR=/tmp/ab_cache_$side timeout -k 5 150 "$ncu" -k regex:jdg_fp8_gemm -c 1 \
        --clock-control none --metrics "$metrics" python tools/profile_one.py "$op" "$shape" 2>&1 |
        grep -E "lts__|dram__|gpu__|sm__|smsp__|rror" | sed "s/^/$side $shape | /"
    done
  done
}
