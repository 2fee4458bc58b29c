// How fast can one CTA per SM stream B from HBM the way the small-M kernel does (benchmarks/NOTES.md 57, 58, 86)? The
// kernel at 64 x 7168 x 16384 (64 x 64 tiles, 112 CTAs, 13 stages) reads B at ~2.24 TB/s, 2.36 with 132 CTAs; the
// copy ring of tma_rate.cu looked faster (~2.85) but re-read a B of 60 MB, part of which the 50 MB L2 may have kept.
// Here every byte is read once, from HBM (the L2 flushed before each run), by copies alone (one producer thread, one
// consumer thread releasing each stage at once), and kernel time is taken with CUDA events:
//   boxes:  CTA c copies B rows [64c, 64c + 64) K block by K block as the kernel's 64 x 128-byte boxes (1 or 2 K
//           blocks per stage), optionally with the kernel's A box (the same 64 rows of A for every CTA, from L2);
//   bulk:   CTA c copies the same number of bytes from one contiguous range, 8 KB per K block (1-D bulk copies);
//   loads:  plain 16-byte loads over the whole of B by 4 x 132 CTAs of 256 threads (what the SMs' load path reaches);
//   cp.async: the boxes' bytes in the boxes' order and swizzled layout, copied through the SMs' load path instead
//           (128 producer threads, 16-byte cp.async each, the full barrier completed by their cp.async arrivals).
// If `boxes` reaches what `bulk` and `loads` do, the kernel's rows-by-K order costs nothing and the kernel's gap is
// its own; if `boxes` is as slow as the kernel, the order (64 rows 16 KB apart per box) is what holds the stream.
//
// Build (sm_90a): nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I cuda
//   benchmarks/experiments/hbm_stream.cu -o /tmp/hbm_stream          Run: /tmp/hbm_stream [clean]
#include "ring_util.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace jdg::ptx;

constexpr int kBlockK = 128;
constexpr int kRowsPerCta = 64;
constexpr int kK = 16384;
constexpr int kKBlocks = kK / kBlockK;
constexpr int kBoxBytes = kRowsPerCta * kBlockK;  // 8 KB: one CTA's B per K block
constexpr int kMaxStages = 24;

struct Stream {
  bool bulk;        // contiguous 1-D copies instead of 2-D boxes of B
  bool with_a;      // also the kernel's A box (64 rows, the same for every CTA) per K block
  int stages;       // ring slots
  int k_per_stage;  // K blocks per slot
  bool cp_async = false;  // 16-byte cp.async copies from 128 threads instead of TMA
  __host__ __device__ int kblock_bytes() const { return with_a ? 2 * kBoxBytes : kBoxBytes; }
  __host__ __device__ int stage_bytes() const { return k_per_stage * kblock_bytes(); }
};

// 1-D bulk copy global -> shared, completing `bar` with its bytes (sizes and addresses multiples of 16).
__device__ __forceinline__ void bulk_load(unsigned int dst, const void* src, unsigned int bytes, unsigned int bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

// 16 bytes global -> shared through the SMs' load path (not cached in L1).
__device__ __forceinline__ void cp_async_16(unsigned int dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}

// One arrival on `bar` once this thread's earlier cp.async copies have landed (counted in the barrier's arrivals).
__device__ __forceinline__ void cp_async_arrive(unsigned int bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}

__global__ void __launch_bounds__(256, 1) stream_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                                         const __grid_constant__ CUtensorMap tmap_b,
                                                         const unsigned char* b, Stream s) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bars[2 * kMaxStages];
  const unsigned int full = smem_addr(bars), empty = smem_addr(bars + kMaxStages);
  init_ring(full, empty, s.stages, s.cp_async ? 128 : 1);
  const unsigned int base = smem_addr(smem);
  const int rounds = kKBlocks / s.k_per_stage;
  if (s.cp_async && threadIdx.x < 128) {  // producers: each box's 512 chunks of 16 bytes, 4 per thread
    for (int i = 0; i < rounds; ++i) {
      const int slot = i % s.stages;
      mbarrier_wait(empty + 8 * slot, ((i / s.stages) & 1u) ^ 1u);
      for (int j = 0; j < s.k_per_stage; ++j) {
        const int kb = i * s.k_per_stage + j;
        const unsigned int dst = base + slot * s.stage_bytes() + j * s.kblock_bytes();
        for (int q = threadIdx.x; q < kRowsPerCta * 8; q += 128) {
          const int r = q / 8, c = q % 8;  // row, 16-byte chunk; stored 128-byte swizzled as TMA would
          cp_async_16(dst + r * kBlockK + ((c ^ (r % 8)) * 16),
                      b + (size_t(blockIdx.x) * kRowsPerCta + r) * kK + kb * kBlockK + c * 16);
        }
      }
      cp_async_arrive(full + 8 * slot);
    }
  } else if (!s.cp_async && threadIdx.x == 0) {  // producer
    for (int i = 0; i < rounds; ++i) {
      const int slot = i % s.stages;
      mbarrier_wait(empty + 8 * slot, ((i / s.stages) & 1u) ^ 1u);
      mbarrier_arrive_expect_tx(full + 8 * slot, s.stage_bytes());
      for (int j = 0; j < s.k_per_stage; ++j) {
        const int kb = i * s.k_per_stage + j;
        const unsigned int dst = base + slot * s.stage_bytes() + j * s.kblock_bytes();
        if (s.bulk) {
          const size_t offset = (size_t(blockIdx.x) * kKBlocks + kb) * kBoxBytes;
          bulk_load(dst, b + offset, kBoxBytes, full + 8 * slot);
        } else {
          tma_load_2d(dst, &tmap_b, full + 8 * slot, kb * kBlockK, blockIdx.x * kRowsPerCta);
        }
        if (s.with_a) tma_load_2d(dst + kBoxBytes, &tmap_a, full + 8 * slot, kb * kBlockK, 0);
      }
    }
  } else if (threadIdx.x == 128) {  // consumer: releases each slot as soon as it is full
    for (int i = 0; i < rounds; ++i) {
      const int slot = i % s.stages;
      mbarrier_wait(full + 8 * slot, (i / s.stages) & 1u);
      mbarrier_arrive_if_lane0(empty + 8 * slot, 0);
    }
  }
}

// Every byte of B once, 16 bytes per load; the sum keeps the loads.
// Four independent loads per thread per step keep more of them in flight.
__global__ void __launch_bounds__(256) load_kernel(const uint4* b, size_t n, unsigned int* sink) {
  unsigned int acc = 0;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = __ldg(b + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) {
    const uint4 v = __ldg(b + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *sink = acc;  // practically never: no stores, but the compiler cannot drop the loads
}

int main(int argc, char** argv) {
  // "clean": flush the L2 by reading the flush buffer instead of writing it, so that no dirty lines are left for the
  // timed kernel to write back to HBM.
  const bool clean_flush = argc > 1 && std::string(argv[1]) == "clean";
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs; B of CTAs x 64 rows x %d bytes read once per run, L2 flushed before each (%s); median "
              "of 15\n", prop.name, sms, kK, clean_flush ? "by reading 256 MB" : "by a 256 MB memset");
  const size_t max_rows = size_t(sms) * kRowsPerCta;
  unsigned char *a = nullptr, *b = nullptr, *flush = nullptr;
  unsigned int* sink = nullptr;
  const size_t flush_bytes = 256u << 20;
  CHECK(cudaMalloc(&a, size_t(kRowsPerCta) * kK));
  CHECK(cudaMalloc(&b, max_rows * kK));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMemset(flush, 0, flush_bytes));  // the read flush then reads written memory, not fresh pages
  CHECK(cudaMalloc(&sink, 4));
  CHECK(cudaMemset(a, 0x38, size_t(kRowsPerCta) * kK));
  CHECK(cudaMemset(b, 0x38, max_rows * kK));
  // The kernel's boxes: 64 rows x 128 bytes, 128-byte swizzle.
  const CUtensorMap map_a = make_map(a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, kRowsPerCta, kK, kRowsPerCta, kBlockK,
                                     CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap map_b = make_map(b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, max_rows, kK, kRowsPerCta, kBlockK,
                                     CU_TENSOR_MAP_SWIZZLE_128B);
  CHECK(cudaFuncSetAttribute(stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  // Median kernel time in microseconds of `launch`, the L2 flushed before each run.
  auto time_us = [&](auto launch) {
    std::vector<float> ms;
    for (int run = 0; run < 17; ++run) {
      if (clean_flush)
        load_kernel<<<4 * sms, 256>>>(reinterpret_cast<const uint4*>(flush), flush_bytes / 16, sink);
      else
        CHECK(cudaMemsetAsync(flush, run, flush_bytes));
      CHECK(cudaEventRecord(start));
      launch();
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      CHECK(cudaGetLastError());
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, start, stop));
      if (run >= 2) ms.push_back(t);  // two warm-up runs
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1000.0;
  };

  std::printf("%-44s %5s %9s %8s\n", "stream", "CTAs", "us", "TB/s");
  struct Case {
    const char* name;
    Stream s;
  };
  const Case cases[] = {
      {"boxes, 13 stages (the kernel's 64 x 64 ring)", {false, false, 13, 1}},
      {"boxes + A box, 12 stages", {false, true, 12, 1}},
      {"boxes, 2 K blocks per stage, 12 stages", {false, false, 12, 2}},
      {"boxes, 24 stages", {false, false, 24, 1}},
      {"bulk 8 KB, 13 stages", {true, false, 13, 1}},
      {"bulk 8 KB, 24 stages", {true, false, 24, 1}},
      {"cp.async, 13 stages", {false, false, 13, 1, true}},
      {"cp.async, 2 K blocks per stage, 12 stages", {false, false, 12, 2, true}},
      {"cp.async, 24 stages", {false, false, 24, 1, true}},
  };
  for (int ctas : {sms * 88 / 132, sms * 112 / 132, sms}) {
    for (const Case& c : cases) {
      const double us = time_us([&] {
        stream_kernel<<<ctas, 256, c.s.stages * c.s.stage_bytes()>>>(map_a, map_b, b, c.s);
      });
      const double bytes = double(ctas) * kRowsPerCta * kK;
      std::printf("%-44s %5d %9.1f %8.2f\n", c.name, ctas, us, bytes / us / 1e6);
    }
    const size_t n = size_t(ctas) * kRowsPerCta * kK / 16;
    const double us = time_us([&] { load_kernel<<<4 * sms, 256>>>(reinterpret_cast<const uint4*>(b), n, sink); });
    std::printf("%-44s %5d %9.1f %8.2f\n", "loads (same bytes, 4 x SMs CTAs)", ctas, us, n * 16.0 / us / 1e6);
  }
  return 0;
}
