// Which way of copying a 256 x 128 stage into a cluster of 2 feeds each SM fastest (benchmarks/NOTES.md 76)? The
// dense kernel's long-K loop runs at about the copies' own rate per SM (~63 GB/s at 4096 x 7168 x 16384), and
// DeepGEMM's kernel, whose consumers issue the same instructions, at ~65. The copies alone, without the GEMM, as the
// kernel's producer issues them, laid out as that GEMM's tiles (banded order, pairs of CTAs on adjacent N blocks
// sharing the A rows), one consumer thread per CTA releasing each stage at once in both CTAs of the pair:
//   halves        each CTA multicasts its 128-row half of A to both, loads its own B and both A-scale boxes (ours)
//   halves+sa     the same, each CTA multicasting one of the two A-scale boxes to both
//   whole         CTA 0 multicasts the whole 256-row A box and the A scales (one 256-float box) to both; each CTA
//                 loads its own B (DeepGEMM's producer)
//   whole-sa-own  CTA 0 multicasts the whole A box; each CTA loads both of its A-scale boxes
// Prints per mode and grid (128, 132 CTAs) the consumer's nanoseconds per K block (median and max over CTAs) and
// the bytes per second into each SM's shared memory.
//
// Build (sm_90a): nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I cuda
//   benchmarks/experiments/tma_ring_cluster.cu -o /tmp/tma_ring_cluster        Run: /tmp/tma_ring_cluster
#include "ring_util.h"

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace jdg::ptx;

constexpr int kBlockM = 256, kBlockN = 128, kBlockK = 128, kStages = 3;
constexpr int kM = 4096, kN = 7168, kK = 16384, kKBlocks = kK / kBlockK;
constexpr int kMBlocks = kM / kBlockM, kPairs = kN / kBlockN / 2, kBandPairs = 8;  // bands of 16 N blocks
constexpr int kTiles = kMBlocks * kPairs * 2;
constexpr int kABytes = kBlockM * kBlockK, kBBytes = kBlockN * kBlockK, kSABytes = kBlockM * 4;
constexpr int kStageBytes = kABytes + kBBytes + 1024;  // A, B (1024-byte aligned), the A scales
enum Mode { kHalves, kHalvesSa, kWhole, kWholeSaOwn, kModes };
const char* const kModeNames[kModes] = {"halves", "halves+sa", "whole", "whole-sa-own"};

// A pair's tile index in the kernel's banded order (bands of kBandPairs pairs, the last one narrower) -> its M block
// and the pair's first N block.
__device__ void pair_tile(int index, int& m_block, int& n_block) {
  const int band = index / (kMBlocks * kBandPairs), first = band * kBandPairs;
  const int width = kPairs - first < kBandPairs ? kPairs - first : kBandPairs;
  const int in_band = index - band * kMBlocks * kBandPairs;
  m_block = in_band / width;
  n_block = 2 * (first + in_band % width);
}

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(256, 1)
    ring_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_a_half,
                const __grid_constant__ CUtensorMap tmap_b, const __grid_constant__ CUtensorMap tmap_sa,
                const __grid_constant__ CUtensorMap tmap_sa_half, int mode, unsigned long long* ps_per_kblock) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bars[2 * kStages];
  const unsigned int full = smem_addr(bars), empty = smem_addr(bars + kStages);
  const unsigned int rank = cluster_cta_rank();
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full + 8 * s, 1);
      mbarrier_init(empty + 8 * s, 2);  // both CTAs' consumers: each producer's multicasts land in both
    }
    fence_barrier_init();
  }
  cluster_sync();
  const unsigned int base = smem_addr(smem);
  const int pairs_in_grid = gridDim.x / 2, pair = blockIdx.x / 2;
  const int my_tiles = (kTiles / 2 - pair + pairs_in_grid - 1) / pairs_in_grid;  // this pair's tiles
  const int total = my_tiles * kKBlocks;
  if (threadIdx.x == 0) {  // producer
    for (int i = 0; i < total; ++i) {
      const int stage = i % kStages, kb = i % kKBlocks;
      int m_block, n_block;
      pair_tile(pair + (i / kKBlocks) * pairs_in_grid, m_block, n_block);
      mbarrier_wait(empty + 8 * stage, ((i / kStages) & 1u) ^ 1u);
      const unsigned int bar = full + 8 * stage, dst = base + stage * kStageBytes;
      mbarrier_arrive_expect_tx(bar, kABytes + kBBytes + kSABytes);
      const int row0 = m_block * kBlockM;
      if (mode == kHalves || mode == kHalvesSa) {
        tma_load_2d_multicast(dst + rank * kABytes / 2, &tmap_a_half, bar, kb * kBlockK, row0 + rank * kBlockM / 2,
                              3);
      } else if (rank == 0) {
        tma_load_2d_multicast(dst, &tmap_a, bar, kb * kBlockK, row0, 3);
      }
      tma_load_2d(dst + kABytes, &tmap_b, bar, kb * kBlockK, (n_block + rank) * kBlockN);
      const unsigned int sa = dst + kABytes + kBBytes;
      if (mode == kHalvesSa) {
        tma_load_2d_multicast(sa + rank * kSABytes / 2, &tmap_sa_half, bar, row0 + rank * kBlockM / 2, kb, 3);
      } else if (mode == kWhole) {
        if (rank == 0) tma_load_2d_multicast(sa, &tmap_sa, bar, row0, kb, 3);
      } else {
        for (int h = 0; h < 2; ++h) tma_load_2d(sa + h * kSABytes / 2, &tmap_sa_half, bar, row0 + h * kBlockM / 2, kb);
      }
    }
  } else if (threadIdx.x == 128) {  // consumer: releases each stage in both CTAs as soon as it is full
    unsigned long long start_ns = 0;
    for (int i = 0; i < total; ++i) {
      const int stage = i % kStages;
      mbarrier_wait(full + 8 * stage, (i / kStages) & 1u);
      if (i == kKBlocks) start_ns = global_timer_ns();  // after the first tile: running
      for (unsigned int c = 0; c < 2; ++c) mbarrier_arrive_cluster(empty + 8 * stage, c);
    }
    const unsigned long long timed = total > kKBlocks ? total - kKBlocks : 1;
    ps_per_kblock[blockIdx.x] = (global_timer_ns() - start_ns) * 1000 / timed;
  }
  __syncthreads();
  cluster_sync();  // no remote arrival or multicast may reach a CTA that has exited
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs; 256 x 128 stages, %d x %d x %d in clusters of 2, %d stages\n", prop.name, sms, kM, kN, kK,
              kStages);
  unsigned char *a, *b;
  float* sa;
  CHECK(cudaMalloc(&a, size_t(kM) * kK));
  CHECK(cudaMalloc(&b, size_t(kN) * kK));
  CHECK(cudaMalloc(&sa, size_t(kKBlocks) * kM * sizeof(float)));
  CHECK(cudaMemset(a, 0x38, size_t(kM) * kK));
  CHECK(cudaMemset(b, 0x38, size_t(kN) * kK));
  CHECK(cudaMemset(sa, 0, size_t(kKBlocks) * kM * sizeof(float)));
  unsigned long long* ps;
  CHECK(cudaMalloc(&ps, sms * sizeof(unsigned long long)));
  const int smem = kStages * kStageBytes;
  CHECK(cudaFuncSetAttribute(ring_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const CUtensorMap ma = make_map(a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, kM, kK, kBlockM, kBlockK,
                                  CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap ma_half = make_map(a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, kM, kK, kBlockM / 2, kBlockK,
                                       CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap mb = make_map(b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, kN, kK, kBlockN, kBlockK,
                                  CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap msa = make_map(sa, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, kKBlocks, kM, 1, kBlockM,
                                   CU_TENSOR_MAP_SWIZZLE_NONE);
  const CUtensorMap msa_half = make_map(sa, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, kKBlocks, kM, 1, kBlockM / 2,
                                        CU_TENSOR_MAP_SWIZZLE_NONE);
  std::printf("%-14s %5s %12s %12s %14s\n", "mode", "CTAs", "ns/K blk", "max", "GB/s per SM");
  for (int round = 0; round < 2; ++round) {
    for (int mode = 0; mode < kModes; ++mode) {
      for (int ctas : {128, sms / 2 * 2}) {
        std::vector<unsigned long long> host(ctas);
        for (int rep = 0; rep < 3; ++rep) {  // the last of three launches
          ring_kernel<<<ctas, 256, smem>>>(ma, ma_half, mb, msa, msa_half, mode, ps);
          CHECK(cudaGetLastError());
          CHECK(cudaDeviceSynchronize());
        }
        CHECK(cudaMemcpy(host.data(), ps, ctas * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
        std::sort(host.begin(), host.end());
        const double ns = host[ctas / 2] / 1000.0;
        std::printf("%-14s %5d %12.1f %12.1f %14.1f\n", kModeNames[mode], ctas, ns, host[ctas - 1] / 1000.0,
                    (kABytes + kBBytes + kSABytes) / ns);
      }
    }
  }
  return 0;
}
