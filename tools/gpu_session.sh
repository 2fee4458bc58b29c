#!/usr/bin/env bash
# GPU-machine session phases: build in place, then run one phase, keeping every log under $OUT (the device tool's
# result folder; ./gpu-out when run elsewhere). The device tool gives 10 minutes per call, so a session is a few calls:
#
#   bash tools/gpu_session.sh tests [pytest args]   machine info, compile times, the whole test suite with the kernels
#   bash tools/gpu_session.sh par [1|2|3]           the GPU test files in parallel processes; 1: test_gpu_configs.py,
#                                                   2: the others, 3: every file no other phase runs (one
#                                                   device call each)
#   bash tools/gpu_session.sh export                tests/test_export.py with the kernels; programs lowered for more SMs
#   bash tools/gpu_session.sh nn                    the vmap, Flax NNX / Equinox layer and remat tests with the kernels
#   bash tools/gpu_session.sh training [--no-xla]    the FP8 training paths: tests, quantization kernel times (and
#                                                   XLA's), the MLP / MoE steps' kernels, the demo (NOTES 101-103;
#                                                   JDG_TRAINING_DEMO=0: without the demo, ~3 minutes less)
#   bash tools/gpu_session.sh sanitize [tool...]     compute-sanitizer memcheck / racecheck of the GPU tests in
#                                                   JDG_SANITIZE_PROCS parallel processes; threads
#   bash tools/gpu_session.sh bench                 the benchmark tables (JSON + plot under $OUT) and the demo
#   bash tools/gpu_session.sh ab                    the full tables, then the previous choices' rows in the same run
#   bash tools/gpu_session.sh pipe                  the accumulator pipeline's GPU tests and 128 x 128 tiles without/with
#   bash tools/gpu_session.sh multi                 the multi-device tests (test_multi_gpu.py, test_gpu_sharding.py) and
#                                                   the demo on every GPU of the machine
#   bash tools/gpu_session.sh sweep [BLOCK_N...]    dense kernel time per forced tile width (DG_TUNE_BLOCK_N)
#   bash tools/gpu_session.sh tma [dense|grouped]  the TMA-store epilogue's GPU tests and the tables without/with it
#   bash tools/gpu_session.sh waits [k_grouped]     DG_PROFILE_WAITS: barrier waits, epilogues, SM clock of a few kernels
#                                                   (k_grouped: dense / per-row / k-grouped on the same tiles, NOTES 25)
#   bash tools/gpu_session.sh split                 half-width wgmma groups (DG_TUNE_SPLIT_HALVES): their GPU tests,
#                                                   then 128 x 192 tiles without and with them (NOTES 19)
#   bash tools/gpu_session.sh splitk                split K (DG_TUNE_SPLIT_K): its GPU tests, then the small-M rows
#                                                   without it, as the heuristics choose, and in clusters of 4 (NOTES 21)
#   bash tools/gpu_session.sh grouped_tiles [KINDS] forced 256 x 128 tiles (cluster 1 / 2) against the model's on
#                                                   grouped kinds (default masked,k-grouped)
#   bash tools/gpu_session.sh ring [NAME [ARGS]]    a copy-ring experiment, benchmarks/experiments/NAME.cu (default
#                                                   tma_rate, NOTES 23, 24; tma_ring_cluster [gemm], NOTES 77;
#                                                   a_reuse_ring [feed], NOTES 112)
#   bash tools/gpu_session.sh tail                  the tail split (DG_TUNE_TAIL_SPLIT): its GPU tests and the masked
#                                                   GPU tests, then masked rows and two dense rows without / with it
set -uo pipefail
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR="${DG_JIT_CACHE_DIR:-/tmp/jdg-cache}" XLA_PYTHON_CLIENT_PREALLOCATE=false
phase="${1:-tests}"
shift || true
# XLA's teardown lines after a device error repeat for every buffer: keep logs readable.
quiet() { grep --line-buffered -v -E "^E[0-9]{4} |Source Location Trace|cuda_status.cc|^$"; }

# A table's "commit" must name the tree that ran. The device copy's git HEAD may lag its working tree, so a
# JDG_COMMIT taken from that HEAD while the tree differs from it would name the wrong commit: refuse it.
if [ "$phase" = bench ] || [ "$phase" = ab ]; then
  # (abbreviated ids resolved; one this copy's git does not know cannot be its HEAD)
  if [ -n "${JDG_COMMIT:-}" ] &&
     [ "$(git rev-parse -q --verify "$JDG_COMMIT^{commit}" 2>/dev/null)" = "$(git rev-parse HEAD 2>/dev/null)" ] &&
     [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    echo "JDG_COMMIT=$JDG_COMMIT is this copy's git HEAD, but the tree differs from it: pass the commit that ran"
    exit 1
  fi
fi

{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } 2>&1 | tee "$OUT/machine.txt"
if [ "$phase" != ring ]; then  # the copy rings are standalone CUDA programs: no package needed
  python -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
  python -m jax_deepgemm info >>"$OUT/machine.txt" 2>&1
fi
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# sanitize_part, sanitize_summary, sanitizer_probe: the sanitize phase's runs (tests/test_sanitize_runs.py checks them)
# shellcheck source=tools/sanitize_runs.sh
source "$(dirname "$0")/sanitize_runs.sh"

case "$phase" in
  tests)
    rm -rf "$DG_JIT_CACHE_DIR"
    shapes=(--gemm 64,2112,7168 --gemm 4096,7168,2048 --contiguous 8,32768,4096,7168 --masked 4,4096,7168,2048,256
            --k-grouped 4,4096,7168,32768)
    { echo "# cold"; python -m jax_deepgemm warmup "${shapes[@]}"; echo "# cache hit (new process: disk)";
      python -m jax_deepgemm warmup "${shapes[@]}"; } 2>&1 | tee "$OUT/compile_times.txt" | tail -4
    timeout 540 python -I -m pytest "${@:-tests}" -q -rs -p no:cacheprovider 2>&1 | quiet >"$OUT/tests.log"
    grep -E "passed|failed|FAILED|ERROR" "$OUT/tests.log" | tail -15
    ;;
  par)
    # The GPU test files, their cases split over parallel processes sharing the one GPU and the kernel cache (JIT
    # compiles dominate a serial run: ~9 min for test_gpu_configs.py alone; the machine has 16 cores). `par 1`:
    # test_gpu_configs.py's cases in 14 processes (7.5 min on an H200, 2026-11-30, session 69); `par 2`: the other
    # files' in 10 (4 min); one device call each (all at once would pass the call's limit). The cases go round-robin
    # over the processes, so that each takes a share of every configuration's compiles. The logs come back as one
    # archive (the device tool returns a limited number of files).
    python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
    rm -rf "$DG_JIT_CACHE_DIR" "$OUT/par"
    mkdir -p "$OUT/par"
    group="${1:-all}"
    others=(tests/test_gpu_grouped.py tests/test_differentiable.py tests/test_gpu_dense.py tests/test_export.py
            tests/test_threads.py tests/test_gpu_sharding.py)
    # 3: the files that neither 1, 2, `training` nor `multi` runs, most of them written for the CPU reference (CI);
    # their ops run the kernels wherever an sm_90 GPU is the default device (each log's summary says whether they
    # did): the oracle and hostile-data checks, layouts, quantization, validation, the layers (flax and equinox must
    # be importable: they are on the device machine), the JIT runtime and the kernels' compiles, control flow, JAX's
    # global modes, the SwiGLU kernels. Every test file is in some phase (tests/test_gpu_phases.py checks that).
    cpu_suite=(tests/test_dense.py tests/test_grouped.py tests/test_hostile_data.py tests/test_quantization.py
               tests/test_layout.py tests/test_permutation.py tests/test_validation.py tests/test_bad_inputs.py
               tests/test_sharding.py tests/test_nn_flax.py tests/test_nn_equinox.py tests/test_cli.py
               tests/test_bench_trace.py tests/test_jit_cache.py tests/test_jit_runtime.py
               tests/test_cuda_lowering_grouped.py tests/cuda/test_kernel_compile.py tests/cuda/test_generated_sources.py
               tests/test_control_flow.py tests/test_jax_modes.py tests/test_swiglu.py tests/test_sass_hints.py
               tests/test_typing.py tests/test_warmup.py tests/test_sanitize_runs.py tests/test_gpu_phases.py)
    case "$group" in
      1) files=(tests/test_gpu_configs.py) procs=14 ;;
      2) files=("${others[@]}") procs=10 ;;
      3) files=("${cpu_suite[@]}") procs=14 ;;
      *) files=(tests/test_gpu_configs.py "${others[@]}") procs=16 ;;
    esac
    python -I -m pytest "${files[@]}" --collect-only -q -p no:cacheprovider 2>/dev/null | grep "::" >"$OUT/par/ids.txt"
    # (no ids: stop; pytest given none would run the whole default collection)
    [ -s "$OUT/par/ids.txt" ] || { echo "par $group: no test ids collected"; exit 1; }
    split -n "r/$procs" -d "$OUT/par/ids.txt" "$OUT/par/ids_"
    for ids in "$OUT"/par/ids_*; do
      (
        name=${ids##*_}
        mapfile -t cases <"$ids"  # one test id per line (some hold spaces)
        # (a case running past 240 s prints every thread's Python stack: a hang shows where it is, NOTES 166)
        timeout -k 5 "${JDG_PAR_LIMIT:-520}" python -I -m pytest "${cases[@]}" -q -rs -p no:cacheprovider \
          -o faulthandler_timeout=240 2>&1 |
          quiet >"$OUT/par/tests_$name.log"
        echo "$name: $(grep -E "passed|failed" "$OUT/par/tests_$name.log" | tail -1)"
        grep -E "^FAILED|^ERROR" "$OUT/par/tests_$name.log" | head -5
      ) &
    done
    wait
    # Every selected case must have run in some process (one cut off by its limit prints no summary).
    all=$(wc -l <"$OUT/par/ids.txt")
    ran=$(for f in "$OUT"/par/tests_*.log; do tail -1 "$f"; done |
          grep -oE "[0-9]+ (passed|failed|skipped|errors?|xfailed|xpassed)" | awk '{n += $1} END {print n + 0}')
    echo "par $group: $ran of the $all selected GPU test cases ran$([ "$ran" -lt "$all" ] && echo ": SOME DID NOT RUN")"
    tar czf "$OUT/tests_par_logs.tgz" -C "$OUT" par && rm -r "$OUT/par"
    if [ -n "${JDG_PAR_DEMO:-}" ]; then  # (an `if`: without the demo the phase still ends with status 0)
      timeout -k 5 240 python -m jax_deepgemm demo 2>&1 | quiet >"$OUT/demo.log" && tail -12 "$OUT/demo.log"
    fi
    ;;
  export)
    # tests/test_export.py with the kernels (artifacts called here and from fresh processes, programs lowered for more
    # SMs), then those programs' kernel times (benchmarks/experiments/more_sms.py). jax.export's serialization needs
    # flatbuffers: from a wheel carried in .whl/ where the machine has none.
    python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
    timeout -k 5 420 python -I -m pytest tests/test_export.py -q -rs -p no:cacheprovider 2>&1 |
      quiet >"$OUT/tests_export.log"
    echo "export: $(tail -1 "$OUT/tests_export.log")"; grep -E "^FAILED|^ERROR" "$OUT/tests_export.log" | head -5
    timeout -k 5 150 python benchmarks/experiments/more_sms.py ${JDG_MORE_SMS_SHAPES:-4096,7168,7168 4096,2112,7168 \
      64,2112,7168 128,7168,16384} 2>&1 | quiet | tee "$OUT/more_sms.txt"
    ;;
  nn)
    # Written for the CPU reference (CI), these run the kernels wherever an sm_90 GPU is the default device; flax
    # and equinox must be importable (they were on the device machine, 2026-11-26).
    for files in "batching tests/test_batching.py" "nn tests/test_nn.py tests/test_nn_equinox.py" \
                 "flax tests/test_nn_flax.py" "remat tests/test_remat.py"; do
      set -- $files; name=$1; shift
      { timeout -k 5 230 python -I -m pytest "$@" -q -rs -p no:cacheprovider 2>&1 | quiet >"$OUT/tests_$name.log"
        echo "$name: $(tail -1 "$OUT/tests_$name.log")"; grep -E "^FAILED|^ERROR" "$OUT/tests_$name.log" | head -5; } &
    done
    wait
    ;;
  training)
    # The FP8 training paths (fp8_dot, ragged_dot and the quantization kernel): their tests in parallel, the kernel's
    # times, the MLP / MoE steps' kernels and the demo. The steps and the demo run with XLA's default preallocation:
    # without it a step's span holds the allocator's host time between steps (NOTES 101).
    cast_args=("$@")  # (the loop below reuses the positional parameters)
    python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
    for files in "tcast tests/test_transposed_cast.py tests/test_cuda_lowering.py" "diff tests/test_differentiable.py" \
                 "nn tests/test_nn.py tests/test_remat.py tests/test_batching.py tests/test_moe_expert_parallel.py" \
                 "export tests/test_export.py tests/cuda/test_quantize_compile.py"; do
      set -- $files; name=$1; shift
      { timeout -k 5 240 python -I -m pytest "$@" -q -rs -p no:cacheprovider 2>&1 | quiet >"$OUT/tests_$name.log"
        echo "$name: $(tail -1 "$OUT/tests_$name.log")"; grep -E "^FAILED|^ERROR" "$OUT/tests_$name.log" | head -5; } &
    done
    wait
    timeout -k 5 150 python benchmarks/experiments/transposed_cast.py all "${cast_args[@]}" 2>&1 |
      quiet >"$OUT/cast.txt"
    cat "$OUT/cast.txt"
    (cd benchmarks/experiments &&
       XLA_PYTHON_CLIENT_PREALLOCATE=true timeout -k 5 180 \
         python step_kernels.py moe moe_weights_after moe_before mlp 2>&1 | quiet >"$OUT/step_kernels.txt")
    grep -E "^(moe|mlp)|quantize" "$OUT/step_kernels.txt"
    if [ "${JDG_TRAINING_DEMO:-1}" != 0 ]; then
      XLA_PYTHON_CLIENT_PREALLOCATE=true timeout -k 5 200 python -m jax_deepgemm demo 2>&1 | quiet >"$OUT/demo.log"
      tail -3 "$OUT/demo.log"
    fi
    ;;
  sanitize)
    # `sanitize [memcheck|racecheck|threads]` (default: all three; a call of the device tool fits one of the first
    # two). memcheck (4 processes, every kernel instrumented): the whole dense and grouped GPU files plus the forced
    # 256-row / cluster / TMA-store configurations and the partial-tile exchanges of split K and the tail split.
    # racecheck (8 processes): the same cases and a few more of its own (256-row tiles of every mode, a cluster of
    # 2), with only this package's kernels (jdg_*) instrumented: racechecking every XLA kernel a test also runs let
    # 6 processes pass 31 cases in 470 s; with the filter 298 cases passed in one 440 s device call (NOTES 115).
    # Each tool first runs sanitizer_probe, which shows that the options in force catch a fault in a jdg_* kernel.
    # -v lists each case as it passes, so a run cut short by its time limit still says what it covered.
    # JDG_SANITIZE_FILES: other test files (with JDG_SANITIZE_K, e.g. "tests/test_transposed_cast.py" and "not bad").
    # JDG_SANITIZE_PROCS / _LIMIT: other process counts / time limits. JDG_SANITIZE_IDS: a file of test ids to run
    # instead of the selection (e.g. the cases an earlier run left not passed).
    if [ -n "${JDG_SANITIZE_IDS:-}" ] && [ ! -f "$JDG_SANITIZE_IDS" ]; then
      echo "JDG_SANITIZE_IDS=$JDG_SANITIZE_IDS: no such file"; exit 2
    fi
    default_files="tests/test_gpu_dense.py tests/test_gpu_grouped.py tests/test_gpu_configs.py"
    read -r -a mem_files <<<"${JDG_SANITIZE_FILES:-$default_files}"
    mem="not configs or (bm256-x2 and (ragged or dense_per_row or masked_rows or contiguous)) or bm128-bn192-tma1"
    race="(bm256-x1 and (ragged or masked_rows or contiguous or dense_per_row or k_grouped)) or (bm128-x2 and masked_rows)"
    race="$race or (bm256-bn128-tma1 and (tma_store_dense or inside_scan)) or (bm128-x1-pipe and (dense or k_grouped))"
    mem="$mem or (split_k and bm128-bn64)"; race="$race or (split_k and bm64-bn32 and (many or scan))"  # the exchange
    mem="$mem or (bm256-x1 and k_grouped)"  # k-grouped's default tiles since NOTES 25
    mem="$mem or contiguous_segments"  # the contiguous segment walk (NOTES 63-65), clusters of 1 and 2
    mem="$mem or c_prefetch"  # C pulled into L2 ahead of the epilogue (NOTES 74)
    mem="$mem or (tail_split and (bm128-bn64 or bm256-bn128) and (masked or contiguous or 1x1 or 3x6))"  # NOTES 27
    race="$race or (tail_split and bm128-bn64 and (masked or bfloat16-3x6))"
    for tool in ${@:-memcheck racecheck threads}; do
      case "$tool" in
        # JDG_SANITIZE_K: another -k selection; JDG_SANITIZE_ARGS: other sanitizer options ("" for none)
        memcheck) sel=${JDG_SANITIZE_K:-$mem}; sanitizer_args=${JDG_SANITIZE_ARGS-}; procs=4 ;;
        racecheck) sel=${JDG_SANITIZE_K:-$mem or $race}; sanitizer_args=${JDG_SANITIZE_ARGS---kernel-name kns=jdg}
          procs=8 ;;
        threads)
          timeout -k 5 80 python -I -m pytest tests/test_threads.py -v -rs -p no:cacheprovider 2>&1 | quiet >"$OUT/threads.log"
          grep -E "PASSED|FAILED|SKIPPED|passed|failed" "$OUT/threads.log" | tail -5
          continue ;;
        *) echo "unknown tool $tool"; exit 2 ;;
      esac
      sanitizer_probe "$tool"
      # The selected cases go round-robin over JDG_SANITIZE_PROCS sanitizer processes sharing the GPU.
      if [ -n "${JDG_SANITIZE_IDS:-}" ]; then
        grep "::" "$JDG_SANITIZE_IDS" >"$OUT/$tool.ids"
      else
        python -I -m pytest "${mem_files[@]}" --collect-only -q -p no:cacheprovider -k "$sel" 2>/dev/null |
          grep "::" >"$OUT/$tool.ids"
      fi
      [ -s "$OUT/$tool.ids" ] || { echo "$tool: no test ids collected"; continue; }
      rm -f "$OUT/$tool".ids_* "$OUT/$tool".log_*
      split -n "r/${JDG_SANITIZE_PROCS:-$procs}" -d "$OUT/$tool.ids" "$OUT/$tool.ids_"
      # (fewer cases than processes leaves some parts empty: nothing to run there)
      for ids in "$OUT/$tool".ids_*; do
        [ -s "$ids" ] && sanitize_part "$tool" "$ids" "${JDG_SANITIZE_LIMIT:-470}" &
      done
      wait
      cat "$OUT/$tool".log_* >"$OUT/$tool.log" && rm -f "$OUT/$tool".log_* "$OUT/$tool".ids_*
      sanitize_summary "$tool"
    done
    ;;
  bench)
    timeout 420 python -m jax_deepgemm bench --iters 20 --output "$OUT/results.json" 2>&1 | quiet | tee "$OUT/bench.log"
    timeout -k 5 200 python -m jax_deepgemm demo 2>&1 | quiet | tee "$OUT/demo.log"
    ;;
  ab)
    # A change's measurement: the full table, then in the same run the rows that compare it with other choices
    # (every grouped mode and the M = 4096 dense shapes at forced 128 x 128 tiles; the small-M dense shapes with one
    # accumulator).
    timeout -k 5 330 python -m jax_deepgemm bench --iters 20 --output "$OUT/results.json" 2>&1 | quiet | tee "$OUT/bench.log"
    DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 timeout -k 5 150 python -m jax_deepgemm bench --only grouped --iters 20 \
      --output "$OUT/grouped_128x128.json" 2>&1 | quiet | tee "$OUT/grouped_128x128.log" | grep -E "^[a-z0-9_]+ +\[" | sed "s/^/128x128 /"
    large=(); small_m=()
    for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do
      large+=(--shape "4096,$nk"); small_m+=(--shape "64,$nk" --shape "128,$nk"); done
    DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 timeout -k 5 90 python -m jax_deepgemm bench --only dense --iters 20 \
      --output "$OUT/dense_4096_128x128.json" "${large[@]}" 2>&1 | quiet | tee "$OUT/dense_4096_128x128.log" | grep -E "^ +[0-9]" | sed "s/^/128x128 /"
    DG_TUNE_ACC_PIPELINE=0 timeout -k 5 90 python -m jax_deepgemm bench --only dense --iters 20 \
      --output "$OUT/dense_small_m_pipe0.json" "${small_m[@]}" 2>&1 | quiet | tee "$OUT/dense_small_m_pipe0.log" | grep -E "^ +[0-9]" | sed "s/^/pipe=0 /"
    ;;
  pipe)
    # The accumulator pipeline (DG_TUNE_ACC_PIPELINE=1): its GPU tests, then 128 x 128 tiles without and with it
    # (the default picks' numbers are in the `ab` / `bench` tables).
    timeout -k 5 170 python -I -m pytest tests/test_gpu_configs.py -v -rs -p no:cacheprovider -k pipe 2>&1 |
      quiet >"$OUT/pipe_tests.log"
    grep -E "FAILED|passed|failed" "$OUT/pipe_tests.log" | tail -8
    for t in 0 1; do
      DG_TUNE_ACC_PIPELINE=$t DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 timeout -k 5 60 python -m jax_deepgemm bench \
        --only dense --iters 20 --output "$OUT/dense_pipe$t.json" --shape 4096,7168,16384 --shape 4096,4096,7168 \
        --shape 4096,7168,2048 --shape 128,7168,16384 2>&1 | quiet | grep -E "^ +[0-9]" | sed "s/^/pipe=$t /"
    done
    for t in 0 1; do
      DG_TUNE_ACC_PIPELINE=$t DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 timeout -k 5 120 python -m jax_deepgemm bench \
        --only grouped --iters 20 --output "$OUT/grouped_pipe$t.json" 2>&1 | quiet | grep -E "^[a-z0-9_]+ +\[" |
        sed "s/^/pipe=$t /"
    done
    ;;
  split)
    timeout -k 5 240 python -I -m pytest tests/test_gpu_configs.py -v -rs -p no:cacheprovider -k split_halves 2>&1 |
      quiet >"$OUT/split_tests.log"
    grep -E "FAILED|passed|failed" "$OUT/split_tests.log" | tail -8
    shapes=(--shape 4096,2112,7168 --shape 6144,2112,7168 --shape 4096,7168,16384 --shape 4096,24576,1536
            --shape 2048,7168,2048)
    for round in 1 2; do for sh in 0 1; do
      DG_TUNE_SPLIT_HALVES=$sh DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 timeout -k 5 80 python -m jax_deepgemm bench \
        --only dense --iters 20 --output "$OUT/split_sh${sh}_r$round.json" "${shapes[@]}" 2>&1 | quiet |
        grep -E "^ +[0-9]" | sed "s/^/128x192 split=$sh r$round /"
    done; done | tee "$OUT/split_bench.txt"
    ;;
  splitk)
    # the split-K GPU tests, one process per forced configuration (each compiles its own kernels)
    for cfg in bm64-bn32-sk2-tma0 bm128-bn64-sk2-tma1 bm64-bn64-sk2-tma1 bm64-bn128-sk2-tma1 bm64-bn64-sk4-tma1 \
               bm128-bn32-sk4-tma0; do
      timeout -k 5 240 python -I -m pytest tests/test_gpu_configs.py -v -rs -p no:cacheprovider -k "split_k and $cfg" \
        2>&1 | quiet >"$OUT/split_k_tests_$cfg.log" &
    done
    wait
    for f in "$OUT"/split_k_tests_*.log; do echo "$(basename "$f"): $(grep -E "passed|failed" "$f" | tail -1)";
      grep -E "^FAILED" "$f" | head -5; done
    shapes=()
    for mnk in 64,2112,7168 64,4096,7168 64,7168,16384 64,7168,2048 128,2112,7168 128,4096,7168 128,7168,16384 \
               128,7168,2048 256,2112,7168 256,4096,7168; do shapes+=(--shape "$mnk"); done
    bench() { timeout -k 5 80 python -m jax_deepgemm bench --only dense --iters 20 "$@" 2>&1 | quiet | grep -E "^ +[0-9]"; }
    for round in 1 2; do for sk in 1 0; do  # 0: the heuristics decide (step 9)
      DG_TUNE_SPLIT_K=$sk bench --output "$OUT/splitk_sk${sk}_r$round.json" "${shapes[@]}" | sed "s/^/sk=$sk r$round /"
    done; done | tee "$OUT/splitk_bench.txt"
    # clusters of 4 where one wave holds them: 33 x 4 and 32 x 4 CTAs
    { DG_TUNE_SPLIT_K=4 DG_TUNE_BLOCK_N=64 bench --output "$OUT/splitk_sk4_bn64.json" --shape 64,2112,7168 \
        --shape 128,2112,7168 | sed "s/^/sk=4 bn=64 /"
      DG_TUNE_SPLIT_K=4 DG_TUNE_BLOCK_N=128 bench --output "$OUT/splitk_sk4_bn128.json" --shape 64,4096,7168 |
        sed "s/^/sk=4 bn=128 /"
      # the register epilogue: no staging tile, so 128 x 128 split tiles keep 4 stages instead of 3
      DG_TUNE_SPLIT_K=0 DG_TUNE_TMA_STORE=0 bench --output "$OUT/splitk_tma0.json" --shape 128,7168,16384 \
        --shape 64,7168,16384 | sed "s/^/sk=0 tma=0 /"; } | tee -a "$OUT/splitk_bench.txt"
    ;;
  ring)
    # A copy-ring experiment, benchmarks/experiments/NAME.cu (tma_rate: NOTES 23, 24; tma_ring_cluster: NOTES 77),
    # built here with nvcc when the GPU machine has one, else the binary carried as benchmarks/experiments/NAME.bin
    # (git-ignored: pass it in the device tool's carry). The remaining arguments go to the binary.
    name="${1:-tma_rate}"; shift || true
    bin=benchmarks/experiments/$name.bin
    if command -v nvcc >/dev/null; then
      nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I cuda "benchmarks/experiments/$name.cu" -o "$bin"
    fi
    if [ -x "$bin" ]; then timeout 120 "$bin" "$@" 2>&1 | tee "$OUT/$name${1:+_$1}.txt"; else echo "no nvcc, no $bin"; fi
    ;;
  tail)
    # the tail-split GPU tests, one process per forced configuration, and the masked GPU tests (on by default there)
    for cfg in bm128-bn64-tma1 bm64-bn96-tma0 bm256-bn128-tma1; do
      timeout -k 5 300 python -I -m pytest tests/test_gpu_configs.py -v -rs -p no:cacheprovider -k "tail_split and $cfg" \
        2>&1 | quiet >"$OUT/tail_tests_$cfg.log" &
    done
    timeout -k 5 300 python -I -m pytest tests/test_gpu_grouped.py -v -rs -p no:cacheprovider -k "masked or scan" \
      2>&1 | quiet >"$OUT/tail_tests_grouped.log" &
    wait
    for f in "$OUT"/tail_tests_*.log; do echo "$(basename "$f"): $(grep -E "passed|failed" "$f" | tail -1)";
      grep -E "^FAILED" "$f" | head -5; grep -B30 -m1 -E "^E  " "$f" | head -60; done
    (cd "$OUT" && tar czf tail_tests.tgz tail_tests_*.log && rm tail_tests_*.log)  # the device tool brings back few files
    for round in 1 2; do for t in 0 1; do
      DG_TUNE_TAIL_SPLIT=$t timeout -k 5 100 python -m jax_deepgemm bench --only grouped --grouped masked --iters 20 \
        --output "$OUT/masked_tail${t}_r$round.json" 2>&1 | quiet | grep -E "^[a-z0-9_]+ +\[" | sed "s/^/tail=$t r$round /"
      DG_TUNE_TAIL_SPLIT=$t timeout -k 5 60 python -m jax_deepgemm bench --only dense --iters 20 \
        --output "$OUT/dense_tail${t}_r$round.json" --shape 4096,24576,1536 --shape 4096,32768,512 \
        --shape 4096,7168,2048 2>&1 | quiet |
        grep -E "^ +[0-9]" | sed "s/^/tail=$t r$round /"
    done; done | tee "$OUT/tail_bench.txt"
    (cd "$OUT" && tar czf tail_bench_json.tgz ./*_tail*.json && rm ./*_tail*.json)
    ;;
  grouped_tiles)
    # Forced tiles against the model's on grouped kinds (`grouped_tiles masked,k-grouped`, the default): one process
    # per setting, the same inputs in each (bench --grouped)
    kinds="${1:-masked,k-grouped}"
    for setting in "model:" "256x128c1:DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=1" \
                   "256x128c2:DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=2"; do
      label=${setting%%:*}
      env ${setting#*:} timeout -k 5 150 python -m jax_deepgemm bench --only grouped --grouped "$kinds" --iters 20 \
        --output "$OUT/grouped_$label.json" 2>&1 | quiet | grep -E "^[a-z0-9_]+ +\[" | sed "s/^/$label /"
    done | tee "$OUT/grouped_tiles.txt"
    ;;
  multi)
    nvidia-smi -L
    timeout 420 python -I -m pytest tests/test_multi_gpu.py tests/test_gpu_sharding.py -q -rs -p no:cacheprovider 2>&1 |
      quiet | tee "$OUT/multi.log" |
      tail -15
    timeout -k 5 200 python -m jax_deepgemm demo 2>&1 | quiet | tee "$OUT/demo.log"
    ;;
  sweep)
    for bn in ${@:-0 64 128 144 160 192}; do
      DG_TUNE_BLOCK_N=$bn timeout 100 python -m jax_deepgemm bench --only dense --iters 10 --output "$OUT/sweep_$bn.json" \
        --shape 4096,7168,16384 --shape 4096,4096,7168 --shape 4096,2112,7168 --shape 4096,24576,1536 2>&1 | quiet |
        grep -E "^ +[0-9]" | sed "s/^/bn=$bn /"
    done
    ;;
  tma)
    # The TMA-store epilogue: its GPU tests, then the tables without (DG_TUNE_TMA_STORE=0) and with it
    # (`tma dense` or `tma grouped`: one of them; default both).
    timeout -k 5 200 python -I -m pytest tests/test_gpu_configs.py -v -rs -p no:cacheprovider -k test_tma_store 2>&1 | quiet \
      >"$OUT/tma_tests.log"
    grep -E "FAILED|passed|failed" "$OUT/tma_tests.log" | tail -8
    for only in ${@:-dense grouped}; do
      for t in 0 1; do
        DG_TUNE_TMA_STORE=$t timeout -k 5 200 python -m jax_deepgemm bench --only "$only" --iters 20 \
          --output "$OUT/${only}_tma$t.json" 2>&1 | quiet | grep -E "^ +[0-9]|^[a-z0-9_]+ +\[" | sed "s/^/tma=$t /"
      done
    done
    ;;
  waits)
    # Who waits: every CTA's producer (on empty stages: the consumers set the pace) and each consumer warpgroup's
    # first thread (on full stages: the loads do), against the kernel's cycles and the SM clock
    # (tools/waits_summary.py sums them up; the last of JDG_PROFILE_RUNS launches runs on a warm GPU);
    # DG_PRINT_CONFIGS names each kernel's tiles.
    export DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS="${JDG_PROFILE_RUNS:-10}"
    run() {
      echo "## $* $(env | grep -E '^DG_TUNE' | sort | tr '\n' ' ')"
      timeout -k 5 90 python tools/profile_one.py "$@" 2>&1 | quiet | grep -v "^I[0-9]"
    }
    if [ "${1:-}" = k_grouped ]; then  # `waits k_grouped`: where the k-grouped K block's time goes (NOTES 25)
      export DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=1  # the same tiles in every kernel
      {
        run dense 4096,7168,16384
        run dense_per_row 4096,7168,16384
        run k_grouped 1,4096,7168,16384
        run k_grouped 4,4096,7168,4096
        run k_grouped 4,4096,7168,8192
      } >"$OUT/waits.log"
      python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
      grep "jax_deepgemm: " "$OUT/waits.log" | sort -u >"$OUT/waits_configs.txt"
      exit 0
    fi
    {
      run dense 64,2112,7168
      run dense 128,7168,16384
      run dense 4096,7168,16384
      DG_TUNE_CLUSTER=2 run dense 4096,7168,16384
      DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 run dense 4096,7168,16384
      DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=128 DG_TUNE_CLUSTER=2 run dense 4096,7168,16384
      run dense 4096,7168,2048
      run contiguous 4,8192,4096,7168
      run k_grouped 4,4096,7168,8192
      DG_TUNE_CLUSTER=2 run k_grouped 4,4096,7168,8192
      run k_grouped 4,7168,2048,8192
    } >"$OUT/waits.log"
    python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
    grep "jax_deepgemm: " "$OUT/waits.log" | sort -u >"$OUT/waits_configs.txt"
    ;;
  *) echo "unknown phase $phase: tests | par | sanitize | bench | ab | pipe | split | splitk | grouped_tiles | tma_rate |"\
          "multi | sweep | tma | waits"
     exit 2 ;;
esac
