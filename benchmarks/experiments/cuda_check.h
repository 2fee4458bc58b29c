// CHECK(call): a CUDA runtime call that must succeed; on failure the experiment prints what failed and exits.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                                       \
  do {                                                                                                    \
    cudaError_t e = (call);                                                                               \
    if (e != cudaSuccess) {                                                                               \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e), __FILE__, __LINE__); \
      std::exit(1);                                                                                       \
    }                                                                                                     \
  } while (0)
