// The JIT runtime: turns a generated kernel source into a cubin through an in-memory cache, the on-disk cache
// (jit_cache.h) and a compiler (jit_compiler.h); and loads cubins into CUDA contexts.
//
// Cache key = digest of (kernel name, generated source, the content of every file under the kernel include
// directory, compiler identity, compiler options, architecture). Nothing here needs a GPU except load_kernel().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cuda_driver.h"
#include "jit_cache.h"

namespace jdg::jit {

// Called by the Python package at import: where the kernel headers are (<include>/jax_deepgemm/*.cuh), and which
// libnvrtc files to try first.
void configure(const std::string& kernel_include_dir, std::vector<std::string> nvrtc_candidates);

// The configured include directory ("" before configure()).
std::string kernel_include_dir();

struct BuildResult {
  std::shared_ptr<const CompiledKernel> kernel;
  std::string cache;  // "memory", "disk" or "compiled"
  double seconds = 0;
};

// The cubin of `source` for `arch`, compiled at most once per process (and once per cache directory). Thread-safe:
// concurrent requests for one kernel wait for a single compilation. Throws std::runtime_error naming `name` (and
// holding the compiler log) on failure; failures are not cached.
BuildResult build(const std::string& name, const std::string& source, const std::string& arch);

// A kernel loaded into one CUDA context. Lives until the process ends.
struct LoadedKernel {
  cu::CUcontext context = nullptr;
  cu::CUfunction function = nullptr;
  // The kernel `report_function` of load_kernel, or null (fp8_gemm.cuh with JDG_PROFILE_WAITS: its
  // jdg_fp8_gemm_profile_report(int grid), which the launcher runs after the kernel to print what it measured).
  cu::CUfunction profile_report = nullptr;
  int device = -1;
  int num_regs = 0;
  int local_bytes = 0;
};

// Loads `kernel` into the current CUDA context (once per context and kernel), looks up `function_name` (and
// `report_function` unless null: only names the module has are looked up, so that no driver call fails on purpose,
// which compute-sanitizer would count as an error), and allows it `dynamic_smem_bytes` of dynamic shared memory
// after checking that the device can run it (architecture and shared-memory capacity). Thread-safe. Throws
// std::runtime_error naming the failing driver call.
const LoadedKernel* load_kernel(const CompiledKernel& kernel, const std::string& arch, const char* function_name,
                                const char* report_function, int dynamic_smem_bytes);

}  // namespace jdg::jit
