// What the FFI handlers of every target share: operand checks and attribute decoding with messages that name the
// target and the operand, and the per-device slots of a call site's loaded kernel.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "jit_runtime.h"
#include "xla/ffi/api/ffi.h"

namespace jdg::ffi_common {
namespace ffi = xla::ffi;

inline const char* dtype_name(ffi::DataType t) {
  switch (t) {
    case ffi::DataType::F8E4M3FN: return "float8_e4m3fn";
    case ffi::DataType::F8E5M2: return "float8_e5m2";
    case ffi::DataType::F32: return "float32";
    case ffi::DataType::BF16: return "bfloat16";
    case ffi::DataType::F16: return "float16";
    case ffi::DataType::F8E8M0FNU: return "float8_e8m0fnu";
    case ffi::DataType::S32: return "int32";
    default: return "another dtype";
  }
}

inline std::string dims_string(ffi::AnyBuffer::Dimensions dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// Checks dtype and shape of one operand of `target`; the message is built only on failure.
inline ffi::Error check_buffer(const char* target, const char* name, const ffi::AnyBuffer& buffer,
                               ffi::DataType dtype, std::initializer_list<std::int64_t> shape) {
  ffi::AnyBuffer::Dimensions dims = buffer.dimensions();
  if (buffer.element_type() == dtype && dims.size() == shape.size() &&
      std::equal(shape.begin(), shape.end(), dims.begin()))
    return ffi::Error::Success();
  std::string expected = "[";
  for (std::int64_t d : shape) expected += (expected.size() > 1 ? ", " : "") + std::to_string(d);
  return ffi::Error::InvalidArgument(std::string(target) + ": " + name + " is " + dtype_name(buffer.element_type()) +
                                     dims_string(dims) + ", expected " + dtype_name(dtype) + expected + "]");
}

// An attribute of a call of `target`: required ones fail with a message naming them, optional ones (absent) give
// `fallback`.
template <typename T>
ffi::ErrorOr<T> attribute(const char* target, const ffi::Dictionary& attrs, std::string_view name,
                          std::optional<T> fallback = {}) {
  if (!attrs.contains(name)) {
    if (fallback.has_value()) return *fallback;
    return ffi::Error::InvalidArgument(std::string(target) + ": missing attribute " + std::string(name));
  }
  ffi::ErrorOr<T> value = attrs.get<T>(name);
  if (!value.has_value())
    return ffi::Error::InvalidArgument(std::string(target) + ": attribute " + std::string(name) +
                                       " has the wrong type (" + value.error().message() + ")");
  return value;
}

// One call site's kernel, loaded into each device's context on first use (initialize), read without locking at
// execute.
class DeviceKernels {
 public:
  static constexpr int kMaxDevices = 256;  // device ordinals per process

  DeviceKernels() {
    for (auto& d : slots_) d.store(nullptr, std::memory_order_relaxed);
  }

  // The kernel loaded for `device`, loading it with `load` (which returns the LoadedKernel or throws) the first
  // time. Thread-safe: two first calls may both load, and the loader returns the same kernel to both.
  template <typename Load>
  ffi::ErrorOr<const jit::LoadedKernel*> get(const char* target, std::int32_t device, Load&& load) {
    if (device < 0 || device >= kMaxDevices)
      return ffi::Error::Internal(std::string(target) + ": device ordinal " + std::to_string(device) +
                                  " is out of range");
    std::atomic<const jit::LoadedKernel*>& slot = slots_[device];
    if (const jit::LoadedKernel* loaded = slot.load(std::memory_order_acquire)) return loaded;
    try {
      const jit::LoadedKernel* loaded = load();
      slot.store(loaded, std::memory_order_release);
      return loaded;
    } catch (const std::exception& e) {
      return ffi::Error::Internal(std::string(target) + ": " + e.what());
    }
  }

 private:
  std::array<std::atomic<const jit::LoadedKernel*>, kMaxDevices> slots_;
};

}  // namespace jdg::ffi_common
