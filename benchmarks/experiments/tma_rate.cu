// Where does a small tile's ~400-cycle floor per K block come from (benchmarks/NOTES.md 17, 22, 23)? The GEMM's
// copies without the GEMM: one CTA per SM, producer threads (lane 0 of 1-4 warps, taking the stages in turn)
// issuing per K block the same TMA boxes as the dense kernel's stage (A: BLOCK_M x 128 FP8 rows, the same rows for
// every CTA as at small M; B: BLOCK_N x 128 rows, this CTA's own; the A scales: BLOCK_M floats) into a ring of
// full / empty mbarriers; one consumer thread waits for each stage and releases it at once. Prints, per K block,
// the consumer's cycles and nanoseconds (so the SM clock), with 1, 2 or 4 K blocks per stage (barrier round
// trips), 1, 2 or 4 producer warps, and waits that poll (test_wait) instead of try_wait's hardware suspension.
//
// Build (sm_90a): nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I cuda
//   benchmarks/experiments/tma_rate.cu -o /tmp/tma_rate          Run: /tmp/tma_rate [big]
// (big: only the 128 x 128 and 256 x 128 rings, including those laid out as a large-M GEMM's tiles, NOTES 46.)
#include "ring_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace jdg::ptx;

constexpr int kBlockK = 128;
constexpr int kKBlocks = 56;  // K = 7168
constexpr int kPasses = 8;    // tiles per CTA: 448 K blocks

struct Ring {
  int block_m, block_n, stages;  // block_m / block_n 0: no A / no B box
  bool scales;                   // the A-scale box (block_m floats)
  int k_per_stage;               // K blocks per stage (each its own boxes), i.e. per barrier round trip
  int producers;                 // warps issuing stages in turn (warp w: stages w, w + producers, ...)
  bool spin;                     // wait with test_wait (never suspends) instead of try_wait
  int a_box = 0;                 // rows per A box (0: block_m, one box), so that a stage's A takes block_m / a_box
  bool tiled = false;            // A and B rows as a large-M GEMM's tiles: CTA c takes A block c / 16, B block c % 16
  __host__ __device__ int a_bytes() const { return block_m * kBlockK; }
  __host__ __device__ int b_bytes() const { return block_n * kBlockK; }
  __host__ __device__ int sa_bytes() const { return scales ? block_m * 4 : 0; }
  // A and B at 1024-byte boundaries (128-byte swizzle), the scales after them
  __host__ __device__ int kblock_bytes() const {
    return ((a_bytes() + b_bytes() + 1023) / 1024) * 1024 + ((sa_bytes() + 1023) / 1024) * 1024;
  }
  __host__ __device__ int stage_bytes() const { return k_per_stage * kblock_bytes(); }
};

// A wait that polls without the hardware suspension of try_wait.
__device__ __forceinline__ void spin_wait(unsigned int bar, unsigned int parity) {
  unsigned int done = 0;
  while (!done) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  }
}

__device__ __forceinline__ void ring_wait(const Ring& ring, unsigned int bar, unsigned int parity) {
  if (ring.spin)
    spin_wait(bar, parity);
  else
    mbarrier_wait(bar, parity);
}

__global__ void __launch_bounds__(256, 1) ring_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                                       const __grid_constant__ CUtensorMap tmap_b,
                                                       const __grid_constant__ CUtensorMap tmap_sa, Ring ring,
                                                       unsigned long long* cycles) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bars[2 * 32];
  const unsigned int full = smem_addr(bars), empty = smem_addr(bars + 32);
  init_ring(full, empty, ring.stages);
  const unsigned int base = smem_addr(smem);
  const int stage_bytes = ring.stage_bytes();
  const int tx = ring.k_per_stage * (ring.a_bytes() + ring.b_bytes() + ring.sa_bytes());
  const int total = kKBlocks * kPasses / ring.k_per_stage, first_tile = kKBlocks / ring.k_per_stage;  // stages
  const int producer = threadIdx.x % 32 == 0 ? int(threadIdx.x / 32) : -1;  // lane 0 of warps 0..3
  if (producer >= 0 && producer < ring.producers) {
    for (int i = producer; i < total; i += ring.producers) {
      const int stage = i % ring.stages;
      const unsigned int phase = (i / ring.stages) & 1u;
      ring_wait(ring, empty + 8 * stage, phase ^ 1u);
      mbarrier_arrive_expect_tx(full + 8 * stage, tx);
      for (int j = 0; j < ring.k_per_stage; ++j) {
        const int kb = (i * ring.k_per_stage + j) % kKBlocks;
        const unsigned int dst = base + stage * stage_bytes + j * ring.kblock_bytes();
        const int a_box = ring.a_box ? ring.a_box : ring.block_m;
        const int a_row0 = ring.tiled ? int(blockIdx.x / 16) * ring.block_m : 0;
        const int b_row0 = (ring.tiled ? int(blockIdx.x % 16) : int(blockIdx.x)) * ring.block_n;
        for (int r = 0; ring.block_m && r < ring.block_m; r += a_box)
          tma_load_2d(dst + r * kBlockK, &tmap_a, full + 8 * stage, kb * kBlockK, a_row0 + r);
        if (ring.block_n) tma_load_2d(dst + ring.a_bytes(), &tmap_b, full + 8 * stage, kb * kBlockK, b_row0);
        if (ring.scales)
          tma_load_2d(dst + ((ring.a_bytes() + ring.b_bytes() + 1023) / 1024) * 1024, &tmap_sa, full + 8 * stage, 0,
                      kb);
      }
    }
  } else if (threadIdx.x == 128) {  // consumer
    int stage = 0;
    unsigned int phase = 0;
    unsigned long long start = 0, start_ns = 0;
    for (int i = 0; i < total; ++i) {
      ring_wait(ring, full + 8 * stage, phase);
      if (i == first_tile) start = clock64(), start_ns = global_timer_ns();  // after the first tile: running
      mbarrier_arrive_if_lane0(empty + 8 * stage, 0);  // this thread is lane 0 of its warp
      if (++stage == ring.stages) stage = 0, phase ^= 1u;
    }
    // cycles per K block
    const unsigned long long kblocks = (total - first_tile) * ring.k_per_stage;
    cycles[blockIdx.x] = (clock64() - start) / kblocks;
    cycles[gridDim.x + blockIdx.x] = (global_timer_ns() - start_ns) * 1000 / kblocks;  // picoseconds
  }
}

int main(int argc, char**) {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs; cycles per K block of one CTA's consumer (median and max over CTAs)\n", prop.name, sms);
  const size_t k = size_t(kKBlocks) * kBlockK;
  const size_t b_rows = 132 * 256;  // enough for 132 CTAs of 256-row B boxes
  unsigned char *a, *b;
  float* sa;
  const size_t a_rows = 9 * 256;  // tiled rings: 132 CTAs over 9 A blocks of up to 256 rows
  CHECK(cudaMalloc(&a, a_rows * k));
  CHECK(cudaMalloc(&b, b_rows * k));
  CHECK(cudaMalloc(&sa, kKBlocks * 256 * sizeof(float)));
  CHECK(cudaMemset(a, 0x38, a_rows * k));
  CHECK(cudaMemset(b, 0x38, b_rows * k));
  CHECK(cudaMemset(sa, 0, kKBlocks * 256 * sizeof(float)));
  unsigned long long* cycles;
  CHECK(cudaMalloc(&cycles, 2 * sms * sizeof(unsigned long long)));
  CHECK(cudaFuncSetAttribute(ring_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 220 * 1024));

  // {BLOCK_M, BLOCK_N, stages, A scales, K blocks per stage, producer warps, spin}
  const Ring rings[] = {
      {64, 16, 16, true, 1, 1, false}, {64, 16, 16, true, 1, 1, true},  {64, 16, 16, true, 1, 2, false},
      {64, 16, 16, true, 1, 4, false}, {64, 16, 8, true, 2, 1, false},  {64, 16, 8, true, 2, 2, false},
      {64, 16, 4, true, 4, 1, false},  {64, 0, 16, false, 1, 1, false}, {64, 0, 16, false, 1, 2, false},
      {64, 32, 16, true, 1, 2, false}, {128, 32, 10, true, 1, 2, false}, {128, 128, 5, true, 1, 1, false},
      {128, 128, 5, true, 1, 2, false},
      // 256 x 128 stages as the large-M kernel's (NOTES 46): the same A for every CTA, then A and B rows per CTA as
      // a GEMM's tiles (L2-resident after the first pass), A in one box of 256 rows, two of 128 or four of 64
      {256, 128, 3, true, 1, 1, false},
      {256, 128, 4, true, 1, 1, false},
      {256, 128, 3, true, 1, 1, false, 0, true},
      {256, 128, 4, true, 1, 1, false, 0, true},
      {256, 128, 4, true, 1, 1, false, 128, true},
      {256, 128, 4, true, 1, 1, false, 64, true},
      {256, 128, 4, true, 1, 2, false, 64, true},
      {128, 128, 6, true, 1, 1, false, 0, true},
      {128, 128, 6, true, 1, 1, false, 64, true},
  };
  const bool big_only = argc > 1;  // any argument: only the rings of 128 x 128 and 256 x 128 stages
  std::printf("%-48s %6s %10s %10s %10s %8s %8s %6s\n", "ring (stages x K blocks)", "CTAs", "median", "max", "rows/K blk", "cyc/row", "ns", "GHz");
  for (const Ring& ring : rings) {
    if (big_only && (ring.block_m < 128 || ring.block_n < 128)) continue;
    const unsigned int bm = std::max(ring.block_m, 1), bn = std::max(ring.block_n, 1);
    const CUtensorMap ma = make_map(a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, a_rows, k, ring.a_box ? ring.a_box : bm,
                                    kBlockK, CU_TENSOR_MAP_SWIZZLE_128B);
    const CUtensorMap mb = make_map(b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, b_rows, k, bn, kBlockK,
                                    CU_TENSOR_MAP_SWIZZLE_128B);
    const CUtensorMap ms = make_map(sa, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, kKBlocks, 256, 1, std::max(bm, 4u),
                                    CU_TENSOR_MAP_SWIZZLE_NONE);  // a box of >= 16 bytes (unused without scales)
    const int smem = ring.stage_bytes() * ring.stages;
    if (smem > 220 * 1024) {
      std::printf("skipped: %d bytes of stages\n", smem);
      continue;
    }
    for (int ctas : {sms, sms / 4}) {
      std::vector<unsigned long long> host(2 * ctas);
      for (int rep = 0; rep < 3; ++rep) {  // the last of three launches: a warm GPU and L2
        ring_kernel<<<ctas, 256, smem>>>(ma, mb, ms, ring, cycles);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
      }
      CHECK(cudaMemcpy(host.data(), cycles, 2 * ctas * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      std::sort(host.begin(), host.begin() + ctas);
      std::sort(host.begin() + ctas, host.end());
      const double ns = host[ctas + ctas / 2] / 1000.0;
      const int rows = ring.block_m + ring.block_n + (ring.scales ? 1 : 0);
      char name[80];
      std::snprintf(name, sizeof(name), "%3d x %3d%s, %2d x %d K blk, %d warp%s%s", ring.block_m, ring.block_n,
                    ring.scales ? " +sa" : "    ", ring.stages, ring.k_per_stage, ring.producers,
                    ring.spin ? ", spin" : "", ring.tiled ? (ring.a_box == 64 ? ", tiled a64" : ring.a_box == 128 ?
                    ", tiled a128" : ", tiled") : "");
      std::printf("%-48s %6d %10llu %10llu %10d %8.2f %8.1f %6.2f\n", name, ctas, host[ctas / 2], host[ctas - 1],
                  rows, double(host[ctas / 2]) / rows, ns, host[ctas / 2] / ns);
    }
  }
  return 0;
}
