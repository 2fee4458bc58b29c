// The one place that reads environment variables. Everything is read when it is needed (when a kernel is compiled
// or a config is chosen), never cached, so that a Python program may change os.environ between compilations.
//
//   DG_JIT_CACHE_DIR               root of the on-disk kernel cache (default ~/.jax_deepgemm)
//   DG_JIT_USE_NVRTC               1: compile with NVRTC; 0: with NVCC; unset: NVRTC when libnvrtc loads, else NVCC
//   DG_JIT_NVCC_COMPILER           path of nvcc (default $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, then PATH)
//   DG_JIT_DEBUG                   print generated sources, compile times and launch configurations
//   DG_JIT_PTXAS_VERBOSE           ask ptxas for register/spill statistics and print the compiler log
//   DG_JIT_PRINT_COMPILER_COMMAND  print every compiler command line
//   DG_JIT_REGISTER_USAGE_LEVEL    (tuning) 0-10: ptxas's --register-usage-level (how freely it may use registers
//                                  to schedule; unset: ptxas's default); part of the kernel cache key
//   DG_JIT_FFMA_YIELD_PERIOD       (tuning) 1-99: in sm_90 cubins, one FFMA in this many of each chain sharing a
//                                  scale register yields (sass_hints.h); 0: ptxas's own hints; unset: 8. Part of
//                                  the kernel cache key
//   DG_PRINT_CONFIGS               print the chosen kernel configuration once per problem shape
//   DG_PROFILE_WAITS               (profiling) kernels compiled while set (named ..._pw) count the cycles their
//                                  pipeline barrier waits and epilogues take and print them (with the elapsed ns)
//                                  for every CTA's producer and first consumer
//   DG_POISON_OUTPUTS              (tests) fill every kernel output with NaN bytes before the launch, so that an
//                                  element the kernel fails to write cannot pass; read when a program is compiled
//   DG_TUNE_BLOCK_M, DG_TUNE_BLOCK_N  (tuning) the only BLOCK_M / BLOCK_N the heuristics may pick, when the kernel
//                                  supports it and it fits; for benchmark sweeps of the configuration model
//   DG_TUNE_CLUSTER                (tuning) 2: clusters of 2 with A multicast in every dense GEMM and wherever a
//                                  grouped one's N-block count is even; 1: none; unset: the heuristics decide
//                                  (heuristics.cc, step 5)
//   DG_TUNE_TMA_STORE              (tuning) 0: the register epilogue everywhere; unset or 1: the TMA-store epilogue
//                                  wherever the configuration allows it
//   DG_TUNE_ACC_PIPELINE           (tuning) 0: one accumulator per consumer everywhere; 1: two wherever the
//                                  configuration allows it (BLOCK_M <= 128, BLOCK_N <= 128); unset: the heuristics
//                                  decide (two wherever they fit)
//   DG_TUNE_PAIRED_STAGES          (tuning) 0: one K block per barrier round trip everywhere; 1: two wherever the
//                                  configuration allows it (the accumulator pipeline, >= 4 stages); unset: the
//                                  heuristics decide (heuristics.cc, step 7)
//   DG_TUNE_SPLIT_HALVES           (tuning) 0: one wgmma group per K block everywhere; unset or 1: half-width
//                                  groups wherever the configuration allows it (BLOCK_M <= 128, BLOCK_N > 128,
//                                  128x128 B scales)
//   DG_TUNE_SPLIT_K                (tuning) dense GEMMs: 2 / 4: every tile's K blocks split over a cluster of that
//                                  many CTAs (BLOCK_M <= 128; no multicast then); unset or 0: the heuristics
//                                  decide (heuristics.cc, step 9); 1: no split K
//   DG_TUNE_TAIL_SPLIT             (tuning) 1: a short last round's tiles split over K by pairs of CTAs wherever
//                                  the configuration allows it (fp8_gemm_tail_split_supported); 0: never; unset:
//                                  the heuristics decide (heuristics.cc, step 10)
//   DG_TUNE_SEGMENTS               (tuning) 1: contiguous 256-row tiles walk expert segments wherever the
//                                  configuration allows it (fp8_gemm_segments_supported); 0: never; unset: the
//                                  heuristics decide (heuristics.cc, step 11)
//   DG_TUNE_C_PREFETCH             (tuning) D >= 1: C pulled into L2 D K blocks before each tile's end wherever the
//                                  configuration allows it (fp8_gemm_c_prefetch_supported); 0: never; unset: the
//                                  heuristics decide (heuristics.cc, step 13)
//   DG_TUNE_DYNAMIC_TILES          (tuning) 1: past the first round each cluster takes the next tile from a
//                                  device counter (JDG_DYNAMIC_TILES) wherever there is no split K or tail split;
//                                  0: never (the static round robin); unset: the heuristics decide (heuristics.cc,
//                                  step 18)
//
// Also consulted: CUDA_HOME / CUDA_PATH (to find nvcc), PATH, HOME, TMPDIR.
#pragma once

#include <optional>
#include <string>

namespace jdg::env {

// Which compiler DG_JIT_USE_NVRTC asks for.
enum class CompilerChoice { kAuto, kNvrtc, kNvcc };

std::string cache_dir();              // DG_JIT_CACHE_DIR, or $HOME/.jax_deepgemm
CompilerChoice compiler_choice();     // DG_JIT_USE_NVRTC
std::optional<std::string> nvcc_override();  // DG_JIT_NVCC_COMPILER (if set and non-empty)
std::optional<std::string> cuda_home();      // CUDA_HOME, else CUDA_PATH
std::string path();                          // PATH
std::string temp_dir();                      // TMPDIR, else /tmp
bool jit_debug();                     // DG_JIT_DEBUG
bool ptxas_verbose();                 // DG_JIT_PTXAS_VERBOSE
bool print_compiler_command();        // DG_JIT_PRINT_COMPILER_COMMAND
int register_usage_level();           // DG_JIT_REGISTER_USAGE_LEVEL: -1 when unset; throws outside 0-10
int ffma_yield_period();              // DG_JIT_FFMA_YIELD_PERIOD: 8 when unset; throws outside 0-99
bool print_configs();                 // DG_PRINT_CONFIGS
std::string print_configs_value();    // its value: a new one prints every configuration line again (tests use it)
bool poison_outputs();                // DG_POISON_OUTPUTS
bool profile_waits();                 // DG_PROFILE_WAITS
// The numeric knobs throw std::invalid_argument for a value that is not a non-negative integer.
int tune_block_m();                   // DG_TUNE_BLOCK_M, 0 when unset
int tune_block_n();                   // DG_TUNE_BLOCK_N, likewise
int tune_cluster();                   // DG_TUNE_CLUSTER, likewise
std::optional<bool> tune_tma_store();     // DG_TUNE_TMA_STORE: nullopt when unset, false only for "0"
std::optional<bool> tune_acc_pipeline();  // DG_TUNE_ACC_PIPELINE: nullopt when unset, false only for "0"
std::optional<bool> tune_paired_stages();  // DG_TUNE_PAIRED_STAGES: nullopt when unset, false only for "0"
bool tune_split_halves();             // DG_TUNE_SPLIT_HALVES: true unless "0"
int tune_split_k();                   // DG_TUNE_SPLIT_K: -1 when unset, else like tune_cluster
int tune_tail_split();                // DG_TUNE_TAIL_SPLIT: -1 when unset, else like tune_cluster
std::optional<bool> tune_segments();  // DG_TUNE_SEGMENTS: nullopt when unset, false only for "0"
std::optional<bool> tune_dynamic_tiles();  // DG_TUNE_DYNAMIC_TILES: nullopt when unset, false only for "0"
int tune_multicast_b();               // DG_TUNE_MULTICAST_B: -1 when unset, else like tune_cluster
int tune_stages();                    // DG_TUNE_STAGES: 0 when unset, else the most stages a kernel may have
int tune_c_prefetch();                // DG_TUNE_C_PREFETCH: -1 when unset, else K blocks before a tile's end (0: off)

}  // namespace jdg::env
