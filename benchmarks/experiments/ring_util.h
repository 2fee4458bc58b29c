// What the copy-ring experiments (tma_rate.cu, hbm_stream.cu) share: their tensor maps, built on the host through the
// driver's cuTensorMapEncodeTiled (found at run time, so no -lcuda), and their rings' full / empty mbarriers.
#pragma once

#include <jax_deepgemm/ptx.cuh>

#include "cuda_check.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline EncodeTiled encoder() {
  static EncodeTiled encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    if (fn == nullptr || q != cudaDriverEntryPointSuccess) {
      std::fprintf(stderr, "cuTensorMapEncodeTiled not found\n");
      std::exit(1);
    }
    return reinterpret_cast<EncodeTiled>(fn);
  }();
  return encode;
}

// rows x cols elements of `elem` bytes, row-major; box: box_rows x box_cols; the kernel's L2 promotion.
inline CUtensorMap make_map(void* ptr, CUtensorMapDataType type, int elem, unsigned long long rows,
                            unsigned long long cols, unsigned int box_rows, unsigned int box_cols,
                            CUtensorMapSwizzle swizzle) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * elem};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t unit[2] = {1, 1};
  const CUresult r = encoder()(&map, type, 2, ptr, dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d) for a %llu x %llu map, box %u x %u\n", int(r), rows,
                 cols, box_rows, box_cols);
    std::exit(1);
  }
  return map;
}

// Thread 0 initializes `stages` full and `stages` empty barriers at `full` / `empty` + 8 * stage (one arrival each;
// `full_arrivals` for the full ones); every thread of the CTA must call it (it ends with the CTA barrier).
__device__ __forceinline__ void init_ring(unsigned int full, unsigned int empty, int stages, int full_arrivals = 1) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      jdg::ptx::mbarrier_init(full + 8 * s, full_arrivals);
      jdg::ptx::mbarrier_init(empty + 8 * s, 1);
    }
    jdg::ptx::fence_barrier_init();
  }
  __syncthreads();
}

// FP8 e4m3 bytes of magnitude 2^-3..2^3 with both signs, never NaN, hashed from the index: data that draws the tensor
// pipe's power as the GEMM's inputs do (constant inputs run at another clock, NOTES 15).
__global__ void fill_fp8(unsigned char* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned int x = static_cast<unsigned int>(i) * 2654435761u ^ static_cast<unsigned int>(i >> 32) * 40503u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    p[i] = static_cast<unsigned char>((x & 0x80u) | (0x20u + (x >> 8) % 48u));
  }
}

__global__ void fill_scales(float* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = 1.0f + float(i % 251) * 1e-3f;
}

// The GEMM rings' operands (tma_ring_cluster.cu, a_reuse_ring.cu): A m x k and B n x k FP8 bytes, the A scales
// (k / 128) x m floats, filled as above.
struct GemmOperands {
  unsigned char *a, *b;
  float* sa;
};

inline GemmOperands make_gemm_operands(int m, int n, int k) {
  GemmOperands ops;
  const size_t k_blocks = size_t(k) / 128;
  CHECK(cudaMalloc(&ops.a, size_t(m) * k));
  CHECK(cudaMalloc(&ops.b, size_t(n) * k));
  CHECK(cudaMalloc(&ops.sa, k_blocks * m * sizeof(float)));
  fill_fp8<<<1024, 256>>>(ops.a, size_t(m) * k);
  fill_fp8<<<1024, 256>>>(ops.b, size_t(n) * k);
  fill_scales<<<1024, 256>>>(ops.sa, k_blocks * m);
  CHECK(cudaGetLastError());
  return ops;
}

// The GEMM rings' consumers: their time per K block from the second tile on (the first fills the ring; a tile is
// kKBlocks K blocks), and their SM clock (clock64 over the global timer): `wait_full` waits for stage i's bytes,
// `record` writes both for this CTA.
template <int kStages, int kKBlocks>
struct RingTimer {
  unsigned long long start_ns = 0, start_clk = 0;
  __device__ void wait_full(unsigned int full, int i) {
    jdg::ptx::mbarrier_wait(full + 8 * (i % kStages), (i / kStages) & 1u);
    if (i == kKBlocks) {
      start_ns = jdg::ptx::global_timer_ns();
      start_clk = clock64();
    }
  }
  __device__ void record(int total, unsigned long long* ps_per_kblock, unsigned int* mhz) const {
    const unsigned long long timed = total > kKBlocks ? total - kKBlocks : 1;
    const unsigned long long ns = jdg::ptx::global_timer_ns() - start_ns;
    ps_per_kblock[blockIdx.x] = ns * 1000 / timed;
    mhz[blockIdx.x] = static_cast<unsigned int>((clock64() - start_clk) * 1000 / (ns > 0 ? ns : 1));
  }
};
