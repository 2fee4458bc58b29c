#include "cuda_driver.h"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>

namespace jdg::cu {
namespace {

struct Loaded {
  DriverApi api{};
  std::string error;  // empty when api is usable
};

template <typename Fn>
bool resolve(void* lib, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (fn == nullptr && error.empty()) error = std::string("libcuda.so.1 has no symbol ") + name;
  return fn != nullptr;
}

Loaded load() {
  Loaded out;
  // Never dlclose: handlers and cached modules may use the driver until the process ends.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    out.error = std::string("cannot load the CUDA driver (libcuda.so.1): ") + (why ? why : "unknown error");
    return out;
  }
  DriverApi& a = out.api;
  std::string& e = out.error;
  resolve(lib, "cuInit", a.cuInit, e);
  resolve(lib, "cuDriverGetVersion", a.cuDriverGetVersion, e);
  resolve(lib, "cuGetErrorString", a.cuGetErrorString, e);
  resolve(lib, "cuGetErrorName", a.cuGetErrorName, e);
  resolve(lib, "cuCtxGetCurrent", a.cuCtxGetCurrent, e);
  resolve(lib, "cuCtxGetDevice", a.cuCtxGetDevice, e);
  resolve(lib, "cuDeviceGetCount", a.cuDeviceGetCount, e);
  resolve(lib, "cuDeviceGet", a.cuDeviceGet, e);
  resolve(lib, "cuDeviceGetAttribute", a.cuDeviceGetAttribute, e);
  resolve(lib, "cuModuleLoadData", a.cuModuleLoadData, e);
  resolve(lib, "cuModuleGetFunction", a.cuModuleGetFunction, e);
  resolve(lib, "cuFuncSetAttribute", a.cuFuncSetAttribute, e);
  resolve(lib, "cuFuncGetAttribute", a.cuFuncGetAttribute, e);
  resolve(lib, "cuLaunchKernelEx", a.cuLaunchKernelEx, e);
  resolve(lib, "cuMemsetD8Async", a.cuMemsetD8Async, e);
  resolve(lib, "cuTensorMapEncodeTiled", a.cuTensorMapEncodeTiled, e);
  if (!e.empty()) {
    e += " (the driver is too old: CUDA 12 or newer is needed)";
    return out;
  }
  return out;
}

const Loaded& loaded() {
  static const Loaded instance = load();  // thread-safe one-time initialisation
  return instance;
}

// cuInit(0), once; "" on success.
const std::string& init_error() {
  static const std::string error = [] {
    const Loaded& l = loaded();
    if (!l.error.empty()) return l.error;
    CUresult r = l.api.cuInit(0);
    return r == CUDA_SUCCESS ? std::string() : error_message("cuInit", r);
  }();
  return error;
}

}  // namespace

const DriverApi& driver() {
  const std::string& error = init_error();
  if (!error.empty()) throw std::runtime_error(error);
  return loaded().api;
}

namespace {

void check_call(const char* function, CUresult r) {
  if (r != CUDA_SUCCESS) throw std::runtime_error(error_message(function, r));
}

// The lowest of value(device) over the devices the driver sees. Throws std::runtime_error naming `what` when the
// driver sees none, or the failing call.
template <typename Value>
double lowest_over_devices(const char* what, Value value) {
  const DriverApi& d = driver();
  int count = 0;
  check_call("cuDeviceGetCount", d.cuDeviceGetCount(&count));
  if (count < 1) throw std::runtime_error(std::string(what) + ": the CUDA driver sees no device");
  double lowest = 0;
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    check_call("cuDeviceGet", d.cuDeviceGet(&device, i));
    const double v = value(d, device);
    if (i == 0 || v < lowest) lowest = v;
  }
  return lowest;
}

int attribute(const DriverApi& d, CUdevice device, int which) {
  int v = 0;
  check_call("cuDeviceGetAttribute", d.cuDeviceGetAttribute(&v, which, device));
  return v;
}

}  // namespace

int min_peak_memory_gbs() {
  const double gbs = lowest_over_devices("min_peak_memory_gbs", [](const DriverApi& d, CUdevice device) {
    const int clock_khz = attribute(d, device, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    const int bus_bits = attribute(d, device, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    return 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  });
  return static_cast<int>(gbs + 0.5);
}

int min_multiprocessor_count() {
  return static_cast<int>(lowest_over_devices("min_multiprocessor_count", [](const DriverApi& d, CUdevice device) {
    return attribute(d, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  }));
}

bool driver_version(int* version, std::string* error) {
  const Loaded& l = loaded();
  if (!l.error.empty()) {
    *error = l.error;
    return false;
  }
  if (CUresult r = l.api.cuDriverGetVersion(version); r != CUDA_SUCCESS) {
    *error = error_message("cuDriverGetVersion", r);
    return false;
  }
  return true;
}

std::string error_message(const char* function, CUresult result) {
  std::string out = std::string(function) + " failed: ";
  const Loaded& l = loaded();
  const char* name = nullptr;
  const char* text = nullptr;
  if (l.api.cuGetErrorName != nullptr) l.api.cuGetErrorName(result, &name);
  if (l.api.cuGetErrorString != nullptr) l.api.cuGetErrorString(result, &text);
  out += name ? std::string(name) : "CUDA error " + std::to_string(result);
  if (text) out += std::string(" (") + text + ")";
  return out;
}

}  // namespace jdg::cu
