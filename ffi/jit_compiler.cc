#include "jit_compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "env.h"
#include "files.h"

extern char** environ;

namespace jdg::jit {
namespace {

std::string join(const std::vector<std::string>& parts, const char* sep = " ") {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// The ptxas options both compilers pass: -v for DG_JIT_PTXAS_VERBOSE, --register-usage-level for
// DG_JIT_REGISTER_USAGE_LEVEL (comma-separated, the form NVRTC's --ptxas-options and nvcc's -Xptxas both take).
std::string ptxas_options(bool ptxas_verbose) {
  std::vector<std::string> ptxas;
  if (ptxas_verbose) ptxas.push_back("-v");
  if (const int level = env::register_usage_level(); level >= 0)
    ptxas.push_back("--register-usage-level=" + std::to_string(level));
  return join(ptxas, ",");
}

std::string with_log(std::string message, const std::string& log) {
  if (!log.empty()) message += ":\n" + log;
  return message;
}

// ---------------------------------------------------------------------------------------------------------------
// NVRTC, declared by hand (nvrtc.h is not needed to build).

using nvrtcResult = int;
using nvrtcProgram = struct NvrtcProgramOpaque*;

struct NvrtcApi {
  void* handle = nullptr;
  std::string path;
  int major = 0;
  int minor = 0;
  const char* (*GetErrorString)(nvrtcResult);
  nvrtcResult (*Version)(int*, int*);
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*DestroyProgram)(nvrtcProgram*);
};

struct NvrtcState {
  std::mutex mutex;
  std::vector<std::string> candidates;
  bool attempted = false;
  std::shared_ptr<const NvrtcApi> api;  // set once loaded; a library is never unloaded
  std::string error;                    // why loading failed
};

NvrtcState& nvrtc_state() {
  static NvrtcState* state = new NvrtcState();  // leaked: used until exit
  return *state;
}

template <typename Fn>
bool resolve(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return fn != nullptr;
}

std::shared_ptr<const NvrtcApi> try_load_nvrtc(const std::string& name, std::string* error) {
  void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    *error = why ? why : (name + ": cannot be loaded");
    return nullptr;
  }
  auto api = std::make_shared<NvrtcApi>();
  api->handle = lib;
  bool ok = resolve(lib, "nvrtcGetErrorString", api->GetErrorString) && resolve(lib, "nvrtcVersion", api->Version) &&
            resolve(lib, "nvrtcCreateProgram", api->CreateProgram) &&
            resolve(lib, "nvrtcCompileProgram", api->CompileProgram) &&
            resolve(lib, "nvrtcGetProgramLogSize", api->GetProgramLogSize) &&
            resolve(lib, "nvrtcGetProgramLog", api->GetProgramLog) &&
            resolve(lib, "nvrtcGetCUBINSize", api->GetCUBINSize) && resolve(lib, "nvrtcGetCUBIN", api->GetCUBIN) &&
            resolve(lib, "nvrtcDestroyProgram", api->DestroyProgram);
  if (!ok) {
    *error = name + ": not a usable libnvrtc (missing symbols; nvrtcGetCUBIN needs CUDA 11.1 or newer)";
    dlclose(lib);
    return nullptr;
  }
  if (api->Version(&api->major, &api->minor) != 0) {
    *error = name + ": nvrtcVersion failed";
    dlclose(lib);
    return nullptr;
  }
  Dl_info info;
  api->path = (dladdr(reinterpret_cast<void*>(api->Version), &info) && info.dli_fname) ? info.dli_fname : name;
  return api;
}

// Loads libnvrtc once (again only if the candidate list changes after a failure).
std::shared_ptr<const NvrtcApi> load_nvrtc(std::string* error) {
  NvrtcState& s = nvrtc_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.api) return s.api;
  if (!s.attempted) {
    s.attempted = true;
    std::vector<std::string> names = s.candidates;
    for (const char* system : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) names.push_back(system);
    // A toolkit whose lib64 is not on the loader path.
    std::vector<std::string> toolkits = {"/usr/local/cuda"};
    if (auto home = env::cuda_home()) toolkits.insert(toolkits.begin(), *home);
    for (const std::string& root : toolkits)
      if (files::is_dir(root + "/lib64")) names.push_back(root + "/lib64/libnvrtc.so");
    std::string tried;
    for (const std::string& name : names) {
      std::string why;
      if (auto api = try_load_nvrtc(name, &why)) {
        s.api = api;
        s.error.clear();
        return s.api;
      }
      tried += "\n  " + why;
    }
    s.error = "libnvrtc could not be loaded (install the nvidia-cuda-nvrtc wheel or a CUDA toolkit); tried:" + tried;
  }
  if (error) *error = s.error;
  return nullptr;
}

class NvrtcCompiler final : public Compiler {
 public:
  explicit NvrtcCompiler(std::shared_ptr<const NvrtcApi> api) : api_(std::move(api)) {}

  std::string signature() const override {
    return "NVRTC " + std::to_string(api_->major) + "." + std::to_string(api_->minor);
  }

  std::vector<std::string> options(const std::string& arch, bool ptxas_verbose) const override {
    std::vector<std::string> out = {"--gpu-architecture=" + arch, "-std=c++17", "-default-device"};
    if (const std::string ptxas = ptxas_options(ptxas_verbose); !ptxas.empty())
      out.push_back("--ptxas-options=" + ptxas);
    return out;
  }

  CompileOutput compile(const std::string& kernel_name, const std::string& source,
                        const std::vector<std::string>& options, const std::string& include_dir) const override {
    std::vector<std::string> all = options;
    all.push_back("-I" + include_dir);
    if (env::print_compiler_command())
      std::fprintf(stderr, "jax_deepgemm: NVRTC (%s) compile %s.cu %s\n", api_->path.c_str(), kernel_name.c_str(),
                   join(all).c_str());
    std::vector<const char*> argv;
    for (const std::string& o : all) argv.push_back(o.c_str());

    const std::string what = "compiling kernel " + kernel_name + " with " + signature();
    nvrtcProgram program = nullptr;
    std::string file_name = kernel_name + ".cu";
    nvrtcResult r = api_->CreateProgram(&program, source.c_str(), file_name.c_str(), 0, nullptr, nullptr);
    if (r != 0) throw std::runtime_error(what + " failed: nvrtcCreateProgram: " + api_->GetErrorString(r));
    struct Destroy {
      const NvrtcApi* api;
      nvrtcProgram* program;
      ~Destroy() { api->DestroyProgram(program); }
    } destroy{api_.get(), &program};

    nvrtcResult compiled = api_->CompileProgram(program, static_cast<int>(argv.size()), argv.data());
    CompileOutput out;
    size_t log_size = 0;
    if (api_->GetProgramLogSize(program, &log_size) == 0 && log_size > 1) {
      std::string log(log_size, '\0');
      if (api_->GetProgramLog(program, log.data()) == 0) out.log = log.substr(0, log.find('\0'));
    }
    if (compiled != 0)
      throw std::runtime_error(with_log(what + " failed (" + api_->GetErrorString(compiled) + ")", out.log));
    size_t cubin_size = 0;
    if ((r = api_->GetCUBINSize(program, &cubin_size)) != 0 || cubin_size == 0)
      throw std::runtime_error(what + " failed: nvrtcGetCUBINSize: " +
                               (r ? api_->GetErrorString(r) : "no cubin (is the architecture a real sm_XX?)"));
    out.cubin.resize(cubin_size);
    if ((r = api_->GetCUBIN(program, out.cubin.data())) != 0)
      throw std::runtime_error(what + " failed: nvrtcGetCUBIN: " + api_->GetErrorString(r));
    return out;
  }

 private:
  std::shared_ptr<const NvrtcApi> api_;
};

// ---------------------------------------------------------------------------------------------------------------
// NVCC, run as a subprocess.

struct ProcessResult {
  int spawn_error = 0;  // errno when the program could not be started
  int exit_code = -1;   // exit status, or -signal
  std::string output;   // stdout and stderr, interleaved
};

// Runs argv[0] (an absolute path) with the current environment; collects its output through a pipe.
// posix_spawn (vfork-like) keeps this safe in a multi-threaded process.
ProcessResult run_process(const std::vector<std::string>& args) {
  ProcessResult result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.spawn_error = errno;
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    result.spawn_error = rc;
    return result;
  }
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return result;
}

// Resolves a program name against PATH; absolute or relative paths (containing '/') are returned as given.
std::string search_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  std::stringstream dirs(env::path());
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + program;
    if (files::is_executable_file(candidate)) return candidate;
  }
  return "";
}

// DG_JIT_NVCC_COMPILER, else $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, else nvcc on PATH.
// Returns "" with `error` set when there is none.
std::string find_nvcc(std::string* error) {
  if (auto path = env::nvcc_override()) {
    std::string resolved = search_path(*path);
    if (resolved.empty()) *error = "DG_JIT_NVCC_COMPILER=" + *path + " was not found on PATH";
    return resolved;
  }
  std::vector<std::string> tried;
  if (auto home = env::cuda_home()) tried.push_back(*home + "/bin/nvcc");
  tried.push_back("/usr/local/cuda/bin/nvcc");
  for (const std::string& candidate : tried)
    if (files::is_executable_file(candidate)) return candidate;
  std::string on_path = search_path("nvcc");
  if (!on_path.empty()) return on_path;
  *error = "nvcc not found (tried DG_JIT_NVCC_COMPILER, " + join(tried, ", ") + " and PATH)";
  return "";
}

struct NvccVersion {
  std::string major_minor;  // "13.0"
  std::string full;         // the last line of `nvcc --version`
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "13.0" from nvcc's "... release 13.0, V13.0.88", or "" when absent. (Plain parsing, not std::regex: regex uses
// locale facets, which crash when a different libstdc++ is already loaded into the process, as in some Python
// environments.)
std::string parse_release(const std::string& text) {
  for (size_t at = text.find("release "); at != std::string::npos; at = text.find("release ", at + 1)) {
    size_t i = at + 8, major_end = i;
    while (major_end < text.size() && is_digit(text[major_end])) ++major_end;
    if (major_end == i || major_end >= text.size() || text[major_end] != '.') continue;
    size_t minor_end = major_end + 1;
    while (minor_end < text.size() && is_digit(text[minor_end])) ++minor_end;
    if (minor_end > major_end + 1) return text.substr(i, minor_end - i);
  }
  return "";
}

// `nvcc --version`, remembered per path once it succeeded. Throws std::runtime_error.
NvccVersion nvcc_version(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, NvccVersion>* known = new std::map<std::string, NvccVersion>();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = known->find(path); it != known->end()) return it->second;
  }
  ProcessResult r = run_process({path, "--version"});
  if (r.spawn_error != 0)
    throw std::runtime_error("cannot run NVCC '" + path + "': " + files::errno_string(r.spawn_error));
  std::string release = r.exit_code == 0 ? parse_release(r.output) : std::string();
  if (release.empty())
    throw std::runtime_error(with_log("'" + path + " --version' did not report an NVCC release (exit code " +
                                          std::to_string(r.exit_code) + ")",
                                      r.output));
  NvccVersion v;
  v.major_minor = release;
  std::string trimmed = r.output;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == '\r')) trimmed.pop_back();
  v.full = trimmed.substr(trimmed.rfind('\n') == std::string::npos ? 0 : trimmed.rfind('\n') + 1);
  std::lock_guard<std::mutex> lock(mutex);
  (*known)[path] = v;
  return v;
}

class NvccCompiler final : public Compiler {
 public:
  NvccCompiler(std::string path, NvccVersion version) : path_(std::move(path)), version_(std::move(version)) {}

  std::string signature() const override { return "NVCC " + version_.major_minor; }

  // The full version line (e.g. "Build cuda_13.0.r13.0/compiler.36424714_0") distinguishes patch releases.
  std::string identity() const override { return signature() + " " + version_.full; }

  std::vector<std::string> options(const std::string& arch, bool ptxas_verbose) const override {
    std::vector<std::string> out = {"-cubin", "-arch=" + arch, "-std=c++17", "-O3"};
    if (const std::string ptxas = ptxas_options(ptxas_verbose); !ptxas.empty()) out.push_back("-Xptxas=" + ptxas);
    return out;
  }

  CompileOutput compile(const std::string& kernel_name, const std::string& source,
                        const std::vector<std::string>& options, const std::string& include_dir) const override {
    const std::string what = "compiling kernel " + kernel_name + " with " + signature() + " (" + path_ + ")";
    std::string error;
    auto work = files::make_temp_dir(env::temp_dir(), "jax_deepgemm_nvcc.", &error);
    if (!work) throw std::runtime_error(what + " failed: " + error);
    struct Cleanup {
      std::string dir;
      ~Cleanup() { files::remove_tree(dir); }
    } cleanup{*work};

    const std::string source_path = *work + "/kernel.cu";
    const std::string cubin_path = *work + "/kernel.cubin";
    if (!files::write_new_synced(source_path, source, &error)) throw std::runtime_error(what + " failed: " + error);
    std::vector<std::string> args = {path_};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"-I" + include_dir, "-o", cubin_path, source_path});
    if (env::print_compiler_command()) std::fprintf(stderr, "jax_deepgemm: %s\n", join(args).c_str());

    ProcessResult r = run_process(args);
    if (r.spawn_error != 0)
      throw std::runtime_error(what + " failed: cannot run '" + path_ + "': " + files::errno_string(r.spawn_error));
    if (r.exit_code != 0)
      throw std::runtime_error(
          with_log(what + " failed (nvcc exit code " + std::to_string(r.exit_code) + ")", r.output));
    CompileOutput out;
    out.log = r.output;
    auto cubin = files::read(cubin_path, &error);
    if (!cubin || cubin->empty())
      throw std::runtime_error(with_log(what + " failed: nvcc produced no cubin: " + error, r.output));
    out.cubin = std::move(*cubin);
    return out;
  }

 private:
  std::string path_;
  NvccVersion version_;
};

std::shared_ptr<const Compiler> make_nvcc() {
  std::string error;
  std::string path = find_nvcc(&error);
  if (path.empty()) throw std::runtime_error(error);
  return std::make_shared<NvccCompiler>(path, nvcc_version(path));
}

}  // namespace

void set_nvrtc_candidates(std::vector<std::string> candidates) {
  NvrtcState& s = nvrtc_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.api || candidates == s.candidates) return;
  s.candidates = std::move(candidates);
  s.attempted = false;  // retry with the new list
}

std::shared_ptr<const Compiler> select_compiler() {
  std::string nvrtc_error;
  switch (env::compiler_choice()) {
    case env::CompilerChoice::kNvrtc:
      if (auto api = load_nvrtc(&nvrtc_error)) return std::make_shared<NvrtcCompiler>(api);
      throw std::runtime_error("DG_JIT_USE_NVRTC=1 but " + nvrtc_error);
    case env::CompilerChoice::kNvcc:
      return make_nvcc();
    case env::CompilerChoice::kAuto:
      if (auto api = load_nvrtc(&nvrtc_error)) return std::make_shared<NvrtcCompiler>(api);
      try {
        return make_nvcc();
      } catch (const std::exception& e) {
        throw std::runtime_error("no CUDA compiler is available: " + nvrtc_error + "\nand " + e.what());
      }
  }
  throw std::logic_error("unreachable");
}

ToolStatus nvrtc_status() {
  ToolStatus s;
  if (auto api = load_nvrtc(&s.error)) {
    s.available = true;
    s.path = api->path;
    s.version = std::to_string(api->major) + "." + std::to_string(api->minor);
  }
  return s;
}

ToolStatus nvcc_status() {
  ToolStatus s;
  s.path = find_nvcc(&s.error);
  if (s.path.empty()) return s;
  try {
    s.version = nvcc_version(s.path).major_minor;
    s.available = true;
  } catch (const std::exception& e) {
    s.error = e.what();
  }
  return s;
}

void check_arch(const std::string& arch) {
  // sm_ followed by 2 or 3 digits and an optional 'a' or 'f' suffix.
  size_t digits = 0;
  while (3 + digits < arch.size() && is_digit(arch[3 + digits])) ++digits;
  const size_t suffix = arch.size() - 3 - digits;
  const bool valid = arch.rfind("sm_", 0) == 0 && digits >= 2 && digits <= 3 &&
                     (suffix == 0 || (suffix == 1 && (arch.back() == 'a' || arch.back() == 'f')));
  if (!valid)
    throw std::invalid_argument("invalid GPU architecture '" + arch + "' (expected e.g. 'sm_90a')");
}

}  // namespace jdg::jit
