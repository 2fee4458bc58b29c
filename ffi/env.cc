#include "env.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace jdg::env {
namespace {

std::optional<std::string> get(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') return std::nullopt;
  return std::string(value);
}

// A flag is on when set to anything but "", "0", "false", "no" or "off" (case-insensitive).
bool flag(const char* name) {
  std::optional<std::string> value = get(name);
  if (!value) return false;
  std::string v = *value;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return !(v == "0" || v == "false" || v == "no" || v == "off");
}

}  // namespace

std::string cache_dir() {
  if (auto dir = get("DG_JIT_CACHE_DIR")) return *dir;
  if (auto home = get("HOME")) return *home + "/.jax_deepgemm";
  return temp_dir() + "/jax_deepgemm";
}

CompilerChoice compiler_choice() {
  if (!get("DG_JIT_USE_NVRTC")) return CompilerChoice::kAuto;
  return flag("DG_JIT_USE_NVRTC") ? CompilerChoice::kNvrtc : CompilerChoice::kNvcc;
}

std::optional<std::string> nvcc_override() { return get("DG_JIT_NVCC_COMPILER"); }

std::optional<std::string> cuda_home() {
  if (auto home = get("CUDA_HOME")) return home;
  return get("CUDA_PATH");
}

std::string path() { return get("PATH").value_or("/usr/local/bin:/usr/bin:/bin"); }

std::string temp_dir() { return get("TMPDIR").value_or("/tmp"); }

bool jit_debug() { return flag("DG_JIT_DEBUG"); }
bool ptxas_verbose() { return flag("DG_JIT_PTXAS_VERBOSE"); }
bool print_compiler_command() { return flag("DG_JIT_PRINT_COMPILER_COMMAND"); }
bool print_configs() { return flag("DG_PRINT_CONFIGS"); }
std::string print_configs_value() { return get("DG_PRINT_CONFIGS").value_or(""); }
bool profile_waits() { return flag("DG_PROFILE_WAITS"); }
bool poison_outputs() { return flag("DG_POISON_OUTPUTS"); }

namespace {
// A tuning knob's number: `unset` when not set; anything but a non-negative integer is refused, so that a typo
// cannot fall back to the heuristics' choice unnoticed.
int tune_number(const char* name, int unset) {
  std::optional<std::string> value = get(name);
  if (!value) return unset;
  if (value->size() > 4 || !std::all_of(value->begin(), value->end(), [](unsigned char c) { return std::isdigit(c); }))
    throw std::invalid_argument(std::string(name) + " must be a non-negative integer (what 0 means depends on the "
                                "knob: see heuristics.cc), got '" + *value + "'");
  return std::stoi(*value);
}

// Unset: the heuristics decide; "0": off; anything else: on wherever the configuration allows it.
std::optional<bool> tune_switch(const char* name) {
  const auto value = get(name);
  if (!value) return std::nullopt;
  return *value != "0";
}
}  // namespace

int register_usage_level() {
  std::optional<std::string> value = get("DG_JIT_REGISTER_USAGE_LEVEL");
  if (!value) return -1;
  const bool digits = std::all_of(value->begin(), value->end(), [](unsigned char c) { return std::isdigit(c); });
  if (value->size() > 2 || !digits || std::stoi(*value) > 10)
    throw std::invalid_argument("DG_JIT_REGISTER_USAGE_LEVEL must be an integer from 0 to 10 (ptxas's "
                                "--register-usage-level), got '" + *value + "'");
  return std::stoi(*value);
}

int ffma_yield_period() {
  std::optional<std::string> value = get("DG_JIT_FFMA_YIELD_PERIOD");
  if (!value) return 8;  // the fastest measured (benchmarks/NOTES.md 118)
  const bool digits = std::all_of(value->begin(), value->end(), [](unsigned char c) { return std::isdigit(c); });
  if (value->size() > 2 || !digits)
    throw std::invalid_argument("DG_JIT_FFMA_YIELD_PERIOD must be an integer from 0 (ptxas's own hints) to 99, "
                                "got '" + *value + "'");
  return std::stoi(*value);
}

int tune_block_m() { return tune_number("DG_TUNE_BLOCK_M", 0); }
int tune_block_n() { return tune_number("DG_TUNE_BLOCK_N", 0); }
int tune_cluster() { return tune_number("DG_TUNE_CLUSTER", 0); }
int tune_split_k() { return tune_number("DG_TUNE_SPLIT_K", -1); }
int tune_tail_split() { return tune_number("DG_TUNE_TAIL_SPLIT", -1); }
int tune_multicast_b() { return tune_number("DG_TUNE_MULTICAST_B", -1); }
int tune_stages() { return tune_number("DG_TUNE_STAGES", 0); }
int tune_c_prefetch() { return tune_number("DG_TUNE_C_PREFETCH", -1); }
// Unset: the model decides where the TMA-store epilogue pays (heuristics.cc, tma_store_pays); "0": never; anything
// else: wherever the configuration allows it.
std::optional<bool> tune_tma_store() { return tune_switch("DG_TUNE_TMA_STORE"); }
std::optional<bool> tune_acc_pipeline() { return tune_switch("DG_TUNE_ACC_PIPELINE"); }
std::optional<bool> tune_paired_stages() { return tune_switch("DG_TUNE_PAIRED_STAGES"); }
std::optional<bool> tune_segments() { return tune_switch("DG_TUNE_SEGMENTS"); }
std::optional<bool> tune_dynamic_tiles() { return tune_switch("DG_TUNE_DYNAMIC_TILES"); }

bool tune_split_halves() { return get("DG_TUNE_SPLIT_HALVES").value_or("1") != "0"; }

}  // namespace jdg::env
