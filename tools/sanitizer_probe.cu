// A positive control for `tools/gpu_session.sh sanitize` with a kernel-name filter (racecheck's default
// "--kernel-name kns=jdg", or JDG_SANITIZE_ARGS): a sanitizer run that instruments nothing also reports nothing, so
// a clean log proves nothing until the same filter is seen to catch a fault. Two kernels make the same deliberate
// fault; only the first carries this package's kernel-name prefix. Under the filter, the sanitizer must report the
// first and not the second. One kernel per process: after memcheck's report the context is gone, and a second kernel
// would not run.
//
//   sanitizer_probe race|oob jdg|other
//     race: a shared-memory read-after-write race (racecheck); oob: a global write one element past its allocation
//     (memcheck); jdg: the kernel named like this package's (jdg_sanitizer_probe), other: sanitizer_probe_other
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 64;  // two warps: racecheck reports hazards between warps

// Each thread writes its shared slot, then reads the slot of the thread one warp further on, with no barrier
// between: a race between warps in shared memory. (volatile: else the compiler forwards the values and no shared
// access is left to race.) `out` holds kThreads floats; with `oob` every thread writes one element further on, so
// the last one writes past it.
__device__ __forceinline__ void make_fault(float* out, bool oob) {
  __shared__ volatile float slots[kThreads];
  const int thread = static_cast<int>(threadIdx.x);
  slots[thread] = static_cast<float>(thread);
  const float neighbour = slots[(thread + 32) % kThreads];
  out[thread + (oob ? 1 : 0)] = neighbour;
}

}  // namespace

extern "C" __global__ void jdg_sanitizer_probe(float* out, bool oob) { make_fault(out, oob); }
extern "C" __global__ void sanitizer_probe_other(float* out, bool oob) { make_fault(out, oob); }

int main(int argc, char** argv) {
  const bool oob = argc > 1 && std::strcmp(argv[1], "oob") == 0;
  const bool ours = argc < 3 || std::strcmp(argv[2], "other") != 0;
  float* out = nullptr;
  cudaError_t status = cudaMalloc(&out, kThreads * sizeof(float));
  if (status == cudaSuccess) {
    if (ours) {
      jdg_sanitizer_probe<<<1, kThreads>>>(out, oob);
    } else {
      sanitizer_probe_other<<<1, kThreads>>>(out, oob);
    }
    status = cudaDeviceSynchronize();
  }
  // Under memcheck the out-of-bounds write ends the context: that is the sanitizer's report, not a failure here.
  std::printf("sanitizer_probe %s %s: %s\n", oob ? "oob" : "race", ours ? "jdg" : "other", cudaGetErrorString(status));
  cudaFree(out);
  return 0;
}
