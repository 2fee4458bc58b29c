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
// the bytes per second into each SM's shared memory (NOTES 77: ~510 ns on an H100 at 128 CTAs in every mode, where
// the GEMM kernel takes ~763).
//
// `gemm` on the command line: the same ring (A in halves) with the GEMM's consumers instead of the releasing
// thread, to find which overlap costs the kernel its ~1.5x (NOTES 77). Two consumer warpgroups of 128 rows each,
// two 64-row waves per warpgroup per K block as the kernel's 256 x 128 loop: wait for the stage, per wave four
// m64n128k32 FP8 wgmmas from the stage, wait for them, after the last wave release the stage in both CTAs (one
// arrival per warp), then (consumer `wgmma+promote`) out += a_scale(row) * acc with the row scales from the stage:
// the block-scale promotion's FP32 work. Consumers: release (one thread, as above), wgmma, wgmma+promote, and
// decoupled (wgmma+promote with each stage released before the wgmmas read it, see kDecoupled); each with
// the copies (feed on) and with stages that carry no bytes (feed off: the barriers' round trips alone). Prints also
// the consumers' SM clock (clock64 over the global timer), so that cycles and ns can both be read.
//
// Build (sm_90a): nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I cuda
//   benchmarks/experiments/tma_ring_cluster.cu -o /tmp/tma_ring_cluster   Run: /tmp/tma_ring_cluster [gemm]
#include "ring_util.h"

#include <algorithm>
#include <cstdio>
#include <string>
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

// kDecoupled: wgmma+promote, but each stage is released as soon as it is full, before the wgmmas read it (timing
// only: the next copy may overwrite what they read), so that the copies run free of the math: if the two only
// shared the SM's resources, each at its own pace, this would take the longer of their times.
enum Consumer { kRelease, kWgmma, kWgmmaPromote, kDecoupled, kConsumers };
const char* const kConsumerNames[kConsumers] = {"release", "wgmma", "wgmma+promote", "decoupled"};

using LoopTimer = RingTimer<kStages, kKBlocks>;

// The consumers' K loop (consumer kWgmma, kWgmmaPromote, kDecoupled): warpgroup `wg` takes rows wg * 128 .. + 127
// of each stage in two 64-row waves, as the kernel's 256 x 128 loop does.
__device__ void consume_gemm(int consumer, unsigned int full, unsigned int empty, unsigned int base, int total,
                             unsigned long long* ps_per_kblock, unsigned int* mhz) {
  const int wg = threadIdx.x / 128, lane = threadIdx.x % 32;
  const int row = (threadIdx.x % 128) / 32 * 16 + lane / 4;
  float acc[kBlockN / 2], out[2][kBlockN / 2];
#pragma unroll
  for (int i = 0; i < kBlockN / 2; ++i) acc[i] = out[0][i] = out[1][i] = 0.f;
  LoopTimer timer;
#pragma unroll 1
  for (int i = 0; i < total; ++i) {
    const int stage = i % kStages;
    timer.wait_full(full, i);
    if (consumer == kDecoupled && lane < 2) mbarrier_arrive_cluster(empty + 8 * stage, lane);
    const unsigned int dst = base + stage * kStageBytes;
    const unsigned long long desc_b = make_smem_desc_sw128(dst + kABytes);
    const float* sa = reinterpret_cast<const float*>(__cvta_shared_to_generic(dst + kABytes + kBBytes));
#pragma unroll
    for (int v = 0; v < 2; ++v) {
      const int wave_row0 = (wg * 2 + v) * 64;
      const float sa0 = sa[wave_row0 + row], sa1 = sa[wave_row0 + row + 8];
      const unsigned long long desc_a = make_smem_desc_sw128(dst + wave_row0 * kBlockK);
      fence_operands(acc);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < 4; ++k) wgmma_fp8<kBlockN, false, false>(acc, desc_a | (2 * k), desc_b | (2 * k), k > 0);
      wgmma_commit_group();
      wgmma_wait_group<0>();
      fence_operands(acc);
      if (consumer != kDecoupled && v == 1 && lane < 2) mbarrier_arrive_cluster(empty + 8 * stage, lane);
      if (consumer != kWgmma) {
#pragma unroll
        for (int j = 0; j < kBlockN / 2; ++j) out[v][j] = fmaf((j / 2) % 2 ? sa1 : sa0, acc[j], out[v][j]);
      }
    }
  }
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kBlockN / 2; ++j) sum += acc[j] + out[0][j] + out[1][j];
  if (sum == 12345.678f) ps_per_kblock[0] = 0;  // keeps the work alive
  if (threadIdx.x == 0) timer.record(total, ps_per_kblock, mhz);
}

// Thread 256 copies (mode: which CTA copies what; feed 0: stages of no bytes, only the barriers' round trips), the
// consumers release each stage in both CTAs: thread 0 at once (kRelease) or the two warpgroups after their wgmmas.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
    ring_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_a_half,
                const __grid_constant__ CUtensorMap tmap_b, const __grid_constant__ CUtensorMap tmap_sa,
                const __grid_constant__ CUtensorMap tmap_sa_half, int mode, int consumer, int feed,
                unsigned long long* ps_per_kblock, unsigned int* mhz) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bars[2 * kStages];
  const unsigned int full = smem_addr(bars), empty = smem_addr(bars + kStages);
  const unsigned int rank = cluster_cta_rank();
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full + 8 * s, 1);
      // each producer's multicasts land in both CTAs: both CTAs' consumers release (one thread, or every warp)
      mbarrier_init(empty + 8 * s, consumer == kRelease ? 2 : 16);
    }
    fence_barrier_init();
  }
  cluster_sync();
  const unsigned int base = (smem_addr(smem) + 1023u) & ~1023u;
  const int pairs_in_grid = gridDim.x / 2, pair = blockIdx.x / 2;
  const int my_tiles = (kTiles / 2 - pair + pairs_in_grid - 1) / pairs_in_grid;  // this pair's tiles
  const int total = my_tiles * kKBlocks;
  if (threadIdx.x >= 256) {  // producer warpgroup
    setmaxnreg_dec<40>();
    if (threadIdx.x == 256) {
      for (int i = 0; i < total; ++i) {
        const int stage = i % kStages, kb = i % kKBlocks;
        int m_block, n_block;
        pair_tile(pair + (i / kKBlocks) * pairs_in_grid, m_block, n_block);
        mbarrier_wait(empty + 8 * stage, ((i / kStages) & 1u) ^ 1u);
        const unsigned int bar = full + 8 * stage, dst = base + stage * kStageBytes;
        if (!feed) {
          mbarrier_arrive_expect_tx(bar, 0);
          continue;
        }
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
          for (int h = 0; h < 2; ++h)
            tma_load_2d(sa + h * kSABytes / 2, &tmap_sa_half, bar, row0 + h * kBlockM / 2, kb);
        }
      }
    }
    __syncwarp();
  } else if (consumer != kRelease) {
    setmaxnreg_inc<232>();
    consume_gemm(consumer, full, empty, base, total, ps_per_kblock, mhz);
  } else if (threadIdx.x == 0) {  // releases each stage in both CTAs as soon as it is full
    LoopTimer timer;
    for (int i = 0; i < total; ++i) {
      timer.wait_full(full, i);
      for (unsigned int c = 0; c < 2; ++c) mbarrier_arrive_cluster(empty + 8 * (i % kStages), c);
    }
    timer.record(total, ps_per_kblock, mhz);
  }
  __syncwarp();     // cluster_sync is .aligned: each warp converged
  cluster_sync();  // no remote arrival or multicast may reach a CTA that has exited
}

struct Timing {
  double ns, max_ns, mhz;
};

int main(int argc, char** argv) {
  const bool gemm = argc > 1 && std::string(argv[1]) == "gemm";
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // every line out at once, even if a variant hangs
  std::printf("%s, %d SMs; 256 x 128 stages, %d x %d x %d in clusters of 2, %d stages\n", prop.name, sms, kM, kN, kK,
              kStages);
  const GemmOperands ops = make_gemm_operands(kM, kN, kK);
  unsigned long long* ps;
  unsigned int* mhz;
  CHECK(cudaMalloc(&ps, sms * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&mhz, sms * sizeof(unsigned int)));
  const int smem = kStages * kStageBytes + 1024;  // + alignment of the stages to 1024 bytes
  CHECK(cudaFuncSetAttribute(ring_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const CUtensorMap ma = make_map(ops.a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, kM, kK, kBlockM, kBlockK,
                                  CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap ma_half = make_map(ops.a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, kM, kK, kBlockM / 2, kBlockK,
                                       CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap mb = make_map(ops.b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, kN, kK, kBlockN, kBlockK,
                                  CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap msa = make_map(ops.sa, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, kKBlocks, kM, 1, kBlockM,
                                   CU_TENSOR_MAP_SWIZZLE_NONE);
  const CUtensorMap msa_half = make_map(ops.sa, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, kKBlocks, kM, 1, kBlockM / 2,
                                        CU_TENSOR_MAP_SWIZZLE_NONE);
  // Median and slowest CTA's ns per K block, and the median CTA's SM clock, of the last of three launches.
  auto time = [&](int mode, int consumer, int feed, int ctas) {
    for (int rep = 0; rep < 3; ++rep) {
      ring_kernel<<<ctas, 384, smem>>>(ma, ma_half, mb, msa, msa_half, mode, consumer, feed, ps, mhz);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
    }
    std::vector<unsigned long long> host(ctas);
    std::vector<unsigned int> clocks(ctas);
    CHECK(cudaMemcpy(host.data(), ps, ctas * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(clocks.data(), mhz, ctas * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    std::sort(host.begin(), host.end());
    std::sort(clocks.begin(), clocks.end());
    return Timing{host[ctas / 2] / 1000.0, host[ctas - 1] / 1000.0, double(clocks[ctas / 2])};
  };
  if (!gemm) {
    std::printf("%-14s %5s %12s %12s %14s\n", "mode", "CTAs", "ns/K blk", "max", "GB/s per SM");
    for (int round = 0; round < 2; ++round)
      for (int mode = 0; mode < kModes; ++mode)
        for (int ctas : {128, sms / 2 * 2}) {
          const Timing t = time(mode, kRelease, 1, ctas);
          std::printf("%-14s %5d %12.1f %12.1f %14.1f\n", kModeNames[mode], ctas, t.ns, t.max_ns,
                      (kABytes + kBBytes + kSABytes) / t.ns);
        }
    return 0;
  }
  std::printf("%-14s %6s %5s %10s %10s %7s %12s\n", "consumer", "copies", "CTAs", "ns/K blk", "max", "MHz",
              "cycles/K blk");
  for (int round = 0; round < 2; ++round)
    for (int consumer = 0; consumer < kConsumers; ++consumer)
      for (int feed : {1, 0})
        for (int ctas : {128, sms / 2 * 2}) {
          const Timing t = time(kHalves, consumer, feed, ctas);
          std::printf("%-14s %6s %5d %10.1f %10.1f %7.0f %12.0f\n", kConsumerNames[consumer], feed ? "yes" : "no",
                      ctas, t.ns, t.max_ns, t.mhz, t.ns * t.mhz / 1000.0);
        }
  return 0;
}
