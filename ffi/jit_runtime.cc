#include "jit_runtime.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "env.h"
#include "files.h"
#include "hash.h"
#include "jit_compiler.h"
#include "sass_hints.h"

namespace jdg::jit {
namespace {

struct Configuration {
  std::mutex mutex;
  std::string include_dir;
  std::string header_digest;  // of the files under include_dir; "" until first needed
};

Configuration& configuration() {
  static Configuration* c = new Configuration();  // leaked on purpose: used by handlers until exit
  return *c;
}

// Digest of every file under the include directory (paths and contents), computed once per configure().
std::pair<std::string, std::string> include_dir_and_digest() {
  Configuration& c = configuration();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.include_dir.empty())
    throw std::runtime_error("jax_deepgemm._C.configure() has not been called: the kernel include directory is unknown");
  if (c.header_digest.empty()) {
    if (!files::is_dir(c.include_dir))
      throw std::runtime_error("the kernel include directory " + c.include_dir + " does not exist");
    Hasher h;
    for (const std::string& rel : files::list_files(c.include_dir)) {
      std::string error;
      auto content = files::read(c.include_dir + "/" + rel, &error);
      if (!content) throw std::runtime_error("cannot hash the kernel headers: " + error);
      h.field(rel).field(*content);
    }
    c.header_digest = h.hex();
  }
  return {c.include_dir, c.header_digest};
}

// One slot per cache key; its mutex serialises the lookup and compilation of that kernel within the process.
struct Slot {
  std::mutex mutex;
  std::shared_ptr<const CompiledKernel> kernel;
};

std::shared_ptr<Slot> slot_for(const std::string& digest) {
  static std::mutex mutex;
  static auto* slots = new std::unordered_map<std::string, std::shared_ptr<Slot>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<Slot>& slot = (*slots)[digest];
  if (!slot) slot = std::make_shared<Slot>();
  return slot;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void print_block(const char* title, const std::string& name, const std::string& text) {
  std::fprintf(stderr, "jax_deepgemm: ---- %s of %s ----\n%s%s---- end ----\n", title, name.c_str(), text.c_str(),
               (!text.empty() && text.back() == '\n') ? "" : "\n");
}

}  // namespace

void configure(const std::string& kernel_include_dir, std::vector<std::string> nvrtc_candidates) {
  Configuration& c = configuration();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.include_dir = kernel_include_dir;
    while (c.include_dir.size() > 1 && c.include_dir.back() == '/') c.include_dir.pop_back();
    c.header_digest.clear();
  }
  set_nvrtc_candidates(std::move(nvrtc_candidates));
}

std::string kernel_include_dir() {
  Configuration& c = configuration();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.include_dir;
}

BuildResult build(const std::string& name, const std::string& source, const std::string& arch) {
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<const Compiler> compiler;
  std::string include_dir, headers;
  try {
    check_arch(arch);
    std::tie(include_dir, headers) = include_dir_and_digest();
    compiler = select_compiler();
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot compile kernel " + name + ": " + e.what());
  }
  const bool debug = env::jit_debug();
  const bool verbose = env::ptxas_verbose();
  const std::vector<std::string> options = compiler->options(arch, verbose);
  const int ffma_period = arch.rfind("sm_90", 0) == 0 ? env::ffma_yield_period() : 0;  // sass_hints.h: sm_90 only
  Hasher key;
  key.field("jax_deepgemm jit v1").field(name).field(source).field(headers).field(compiler->identity()).field(arch);
  for (const std::string& o : options) key.field(o);
  if (ffma_period > 0) key.field("ffma yield period " + std::to_string(ffma_period));
  const std::string digest = key.hex();

  std::shared_ptr<Slot> slot = slot_for(digest);
  std::lock_guard<std::mutex> lock(slot->mutex);
  BuildResult result;
  if (slot->kernel) {
    result.kernel = slot->kernel;
    result.cache = "memory";
    result.seconds = seconds_since(start);
    if (debug) std::fprintf(stderr, "jax_deepgemm: %s: in-memory cache hit\n", name.c_str());
    return result;
  }

  DiskCache disk(env::cache_dir());
  bool damaged = false;
  if (std::optional<CompiledKernel> cached = disk.load(name, digest, &damaged)) {
    cached->source = source;
    if (cached->compiler.empty()) cached->compiler = compiler->signature();
    slot->kernel = std::make_shared<const CompiledKernel>(std::move(*cached));
    result.cache = "disk";
  } else {
    if (debug) print_block("source", name, source);
    CompiledKernel kernel;
    kernel.name = name;
    kernel.digest = digest;
    kernel.source = source;
    kernel.compiler = compiler->signature();
    CompileOutput out = compiler->compile(name, source, options, include_dir);  // throws with the log
    kernel.cubin = std::move(out.cubin);
    kernel.log = std::move(out.log);
    if (ffma_period > 0) {
      // A speed pass over the compiler's own output: an image it cannot read keeps ptxas's hints, with a warning.
      try {
        kernel.cubin = rewrite_ffma_hints(kernel.cubin, ffma_period, nullptr);
      } catch (const std::exception& e) {
        warn_once("ffma hints " + name, "kernel " + name + " keeps ptxas's FFMA hints: " + e.what());
      }
    }
    disk.store(kernel);
    slot->kernel = std::make_shared<const CompiledKernel>(std::move(kernel));
    result.cache = "compiled";
  }
  result.kernel = slot->kernel;
  result.seconds = seconds_since(start);
  if (debug)
    std::fprintf(stderr, "jax_deepgemm: %s: %s with %s in %.3f s (%zu-byte cubin, cache %s)\n", name.c_str(),
                 result.cache == "compiled" ? "compiled" : "loaded from the disk cache",
                 result.kernel->compiler.c_str(), result.seconds, result.kernel->cubin.size(),
                 disk.entry_dir(name, digest).c_str());
  if ((verbose || (debug && result.cache == "compiled")) && !result.kernel->log.empty())
    print_block("compiler log", name, result.kernel->log);
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Loading into CUDA contexts.

namespace {

void check_cu(cu::CUresult r, const char* function, const std::string& what) {
  if (r != cu::CUDA_SUCCESS) throw std::runtime_error(what + ": " + cu::error_message(function, r));
}

// Whether a cubin for `arch` ("sm_90a", "sm_100f", "sm_90") runs on a device of compute capability major.minor.
bool arch_runs_on(const std::string& arch, int major, int minor, std::string* wanted) {
  size_t digits_end = arch.find_first_not_of("0123456789", 3);
  int target = std::stoi(arch.substr(3, digits_end - 3));
  char suffix = digits_end == std::string::npos ? '\0' : arch[digits_end];
  int t_major = target / 10, t_minor = target % 10;
  if (suffix == 'a') {
    *wanted = "exactly " + std::to_string(t_major) + "." + std::to_string(t_minor);
    return major == t_major && minor == t_minor;
  }
  *wanted = std::to_string(t_major) + "." + std::to_string(t_minor) + " to " + std::to_string(t_major) + ".x";
  return major == t_major && minor >= t_minor;
}

}  // namespace

const LoadedKernel* load_kernel(const CompiledKernel& kernel, const std::string& arch, const char* function_name,
                                const char* report_function, int dynamic_smem_bytes) {
  const std::string what = "loading kernel " + kernel.name;
  const cu::DriverApi* d = nullptr;
  try {
    d = &cu::driver();
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
  cu::CUcontext context = nullptr;
  check_cu(d->cuCtxGetCurrent(&context), "cuCtxGetCurrent", what);
  if (context == nullptr) throw std::runtime_error(what + ": no CUDA context is current on this thread");

  static std::mutex mutex;
  static auto* loaded = new std::map<std::pair<cu::CUcontext, std::string>, std::unique_ptr<LoadedKernel>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(context, kernel.digest);
  if (auto it = loaded->find(key); it != loaded->end()) return it->second.get();

  auto entry = std::make_unique<LoadedKernel>();
  entry->context = context;
  check_cu(d->cuCtxGetDevice(&entry->device), "cuCtxGetDevice", what);
  const std::string on_device = what + " on CUDA device " + std::to_string(entry->device);
  int major = 0, minor = 0, smem_optin = 0;
  check_cu(d->cuDeviceGetAttribute(&major, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, entry->device),
           "cuDeviceGetAttribute", on_device);
  check_cu(d->cuDeviceGetAttribute(&minor, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, entry->device),
           "cuDeviceGetAttribute", on_device);
  check_cu(d->cuDeviceGetAttribute(&smem_optin, cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                   entry->device),
           "cuDeviceGetAttribute", on_device);
  std::string wanted;
  if (!arch_runs_on(arch, major, minor, &wanted))
    throw std::runtime_error(on_device + ": the kernel was compiled for " + arch + ", which needs compute capability " +
                             wanted + ", but the device has " + std::to_string(major) + "." +
                             std::to_string(minor));
  if (dynamic_smem_bytes > smem_optin)
    throw std::runtime_error(on_device + ": the kernel needs " + std::to_string(dynamic_smem_bytes) +
                             " bytes of shared memory per block, the device allows " + std::to_string(smem_optin));

  cu::CUmodule module = nullptr;
  check_cu(d->cuModuleLoadData(&module, kernel.cubin.data()), "cuModuleLoadData", on_device);
  check_cu(d->cuModuleGetFunction(&entry->function, module, function_name), "cuModuleGetFunction", on_device);
  if (report_function != nullptr)
    check_cu(d->cuModuleGetFunction(&entry->profile_report, module, report_function), "cuModuleGetFunction",
             on_device + " (" + report_function + ")");
  check_cu(d->cuFuncSetAttribute(entry->function, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 dynamic_smem_bytes),
           "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", on_device);
  d->cuFuncGetAttribute(&entry->num_regs, cu::CU_FUNC_ATTRIBUTE_NUM_REGS, entry->function);
  d->cuFuncGetAttribute(&entry->local_bytes, cu::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, entry->function);
  return loaded->emplace(key, std::move(entry)).first->second.get();
}

}  // namespace jdg::jit
