// The few CUDA driver API declarations the runtime uses, written out here so that building needs no CUDA toolkit.
// libcuda.so.1 is opened with dlopen the first time a GPU is needed; importing the module never touches it.
// The values below are the driver ABI (cuda.h), which NVIDIA keeps stable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace jdg::cu {

using CUresult = int;
using CUdevice = int;
using cuuint32_t = std::uint32_t;
using cuuint64_t = std::uint64_t;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;

// CUdevice_attribute
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36;    // kHz
constexpr int CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37;  // bits
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute
constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// cuTensorMapEncodeTiled enums (CUtensorMapDataType, ...Interleave, ...Swizzle, ...L2promotion, ...FloatOOBfill)
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0;
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1;
constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7;
constexpr int CU_TENSOR_MAP_INTERLEAVE_NONE = 0;
constexpr int CU_TENSOR_MAP_SWIZZLE_NONE = 0;
constexpr int CU_TENSOR_MAP_SWIZZLE_32B = 1;
constexpr int CU_TENSOR_MAP_SWIZZLE_64B = 2;
constexpr int CU_TENSOR_MAP_SWIZZLE_128B = 3;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3;
constexpr int CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0;  // out-of-bounds elements read as zero

// cuLaunchKernelEx's configuration (CUlaunchConfig, CUlaunchAttribute: an id, padding to 8 bytes, a 64-byte value).
constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4;
struct CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    unsigned int cluster_dim[3];  // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: x, y, z
  } value;
};
struct CUlaunchConfig {
  unsigned int grid_dim[3];
  unsigned int block_dim[3];
  unsigned int shared_bytes;
  CUstream stream;
  CUlaunchAttribute* attrs;
  unsigned int num_attrs;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute layout");
static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig layout");

// The driver entry points, resolved with dlsym. Every pointer is non-null once driver() returned.
struct DriverApi {
  CUresult (*cuInit)(unsigned int flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuGetErrorString)(CUresult error, const char** str);
  CUresult (*cuGetErrorName)(CUresult error, const char** str);
  CUresult (*cuCtxGetCurrent)(CUcontext* ctx);
  CUresult (*cuCtxGetDevice)(CUdevice* device);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*cuFuncGetAttribute)(int* value, int attribute, CUfunction function);
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig* config, CUfunction f, void** params, void** extra);
  CUresult (*cuMemsetD8Async)(void* dst, unsigned char value, std::size_t count, CUstream stream);
  CUresult (*cuTensorMapEncodeTiled)(void* tensor_map, int data_type, cuuint32_t rank, void* global_address,
                                     const cuuint64_t* global_dim, const cuuint64_t* global_strides,
                                     const cuuint32_t* box_dim, const cuuint32_t* element_strides, int interleave,
                                     int swizzle, int l2_promotion, int oob_fill);
};

// Loads libcuda.so.1 (once, thread-safe) and calls cuInit(0). Throws std::runtime_error saying what failed.
const DriverApi& driver();

// The driver's CUDA version (e.g. 13000), loading the library but without cuInit; false with `error` set when the
// driver cannot be loaded.
bool driver_version(int* version, std::string* error);

// The lowest peak memory bandwidth, in GB/s (memory clock x 2 transfers x bus width), over the devices the driver
// sees. Throws std::runtime_error when the driver cannot be loaded or initialised, a call fails, or it sees none.
int min_peak_memory_gbs();

// The fewest multiprocessors (SMs) over the devices the driver sees; throws as min_peak_memory_gbs.
int min_multiprocessor_count();

// "cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)".
std::string error_message(const char* function, CUresult result);

}  // namespace jdg::cu
