// Compilers that turn a generated kernel source into a cubin: NVRTC (libnvrtc, loaded with dlopen) and NVCC (run as a
// subprocess). Neither needs a GPU. DG_JIT_USE_NVRTC picks one (see env.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace jdg::jit {

struct CompileOutput {
  std::string cubin;  // the ELF image
  std::string log;    // compiler messages (warnings, ptxas statistics)
};

class Compiler {
 public:
  virtual ~Compiler() = default;

  // "NVRTC 13.5" or "NVCC 13.0": shown to users and part of the cache key.
  virtual std::string signature() const = 0;

  // What identifies the compiler build in the cache key (at least the signature).
  virtual std::string identity() const { return signature(); }

  // The options for `arch` (e.g. "sm_90a"), without the include directory: with the source, the headers' content
  // and the signature they make the cache key (the headers' path is left out so that equal headers share entries).
  virtual std::vector<std::string> options(const std::string& arch, bool ptxas_verbose) const = 0;

  // Compiles `source` (the generated kernel.cu) with `options` plus -I`include_dir`. Throws std::runtime_error
  // whose message names `kernel_name` and holds the compiler log when compilation fails.
  virtual CompileOutput compile(const std::string& kernel_name, const std::string& source,
                                const std::vector<std::string>& options, const std::string& include_dir) const = 0;
};

// The absolute libnvrtc paths to try (found by the Python package in site-packages) before the system names
// libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so.
void set_nvrtc_candidates(std::vector<std::string> candidates);

// The compiler that DG_JIT_USE_NVRTC asks for, read now. Throws std::runtime_error saying why none is available.
std::shared_ptr<const Compiler> select_compiler();

// For runtime_info(): whether each compiler can be used, where it is, its version or why not.
struct ToolStatus {
  bool available = false;
  std::string path;
  std::string version;
  std::string error;
};
ToolStatus nvrtc_status();
ToolStatus nvcc_status();

// Throws std::invalid_argument unless `arch` looks like sm_90, sm_90a, sm_100f...
void check_arch(const std::string& arch);

}  // namespace jdg::jit
