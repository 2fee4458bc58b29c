// Is the 256 x 128 tile's long-K loop bound by shared-memory bandwidth (benchmarks/NOTES.md 112)? At 4096 x 7168 x
// 16384 a K block takes ~1120 cycles with the copies and ~1000 without (NOTES 78). Per K block the 256 x 128 tile's
// wgmmas read 96 KB of shared memory (A's 32 KB once, B's 16 KB once per 64-row wave) and the copies write 48 KB:
// 144 KB at 128 bytes per clock is 1125 cycles. A 128 x 256 tile whose two warpgroups (64 rows each) keep their A
// fragment in registers and reuse it over two n128 halves reads 16 KB of A and twice 32 KB of B: 80 KB, and 128 KB
// with the copies (1024 cycles, the tensor cores' own time).
//
// The ring of tma_ring_cluster.cu (clusters of 2 on adjacent N blocks sharing A, each CTA multicasting its half of
// A, 3 stages of 48 KB, the kernel's banded tile order) with these consumers, two warpgroups each:
//   tall-ss     256 x 128 tiles: per warpgroup two 64-row waves of four m64n128k32 wgmmas, A and B from shared
//               memory (the kernel's loop)
//   wide-ss     128 x 256 tiles: per warpgroup one 64-row wave, two n128 halves of four wgmmas, A and B from shared
//               memory (96 KB per K block, as tall-ss: the control for the tile shape)
//   wide-rs     the same with A loaded once per K block by ldmatrix and both halves' wgmmas taking it from registers
//               (80 KB per K block)
//   wide-n256   128 x 256 tiles, one m64n256k32 wgmma per K step, A and B from shared memory (80 KB per K block);
//               its accumulator takes 128 registers, so it runs only without the promotion
//   tall-q-rs1  256 x 128 tiles in quarters (NOTES 116): per warpgroup and K block four m64n64 pieces (two waves x two
//               column halves), A from registers (ldmatrix, once per wave), B from shared memory; two 32-float
//               accumulators (one per half) in turn, so that each quarter is promoted while the next one's wgmmas run.
//               One A fragment: a wave's first quarter waits for the previous wave's last before its ldmatrix
//   tall-q-rs2  the same with two A fragments (one per wave): no wgmma wait but for the quarter to be promoted
//   tall-q-ss   the same quarters with A from shared memory (no fragment): 128 KB of wgmma reads per K block
//   tall-q-c1   tall-q-ss with every wgmma reading stage 0 (descriptors fixed: wrong results, same work otherwise)
//   tall-q-c2   tall-q-c1 with fixed A scales too (no shared-memory scale reads)
//   tall-q-c3   tall-q-c1 with the first K block's A scales kept in registers for the whole loop (no shared-memory
//               scale reads; FFMAs with a register scale, where tall-q-c2's have an immediate)
//   tall-q-c4   tall-q-c3 with one scale per warpgroup, loaded from global memory at a warp-uniform address (so that
//               ptxas may keep it in a uniform register: FFMAs with a uniform-register scale)
//   tall-q-c5   tall-q-c1 with each quarter's FFMAs written row by row (row r's 16, then row r + 8's)
//   tall-q-r    tall-q-ss with its FFMAs written as tall-q-c5's
//   tall-q-e    tall-q-ss with the next K block's A scales read two quarters earlier (its stage waited for then) and
//               each descriptor a stage-0 descriptor plus the stage's offset (as the kernel builds them)
//   tall-q-ef   tall-q-e with the descriptors of tall-q-c1
//   tall-q-o    tall-q-e with the stage's offset kept in a register, advanced once per K block (no division per issue)
//   tall-q-os   tall-q-o with the scales read where tall-q-ss reads them (after the last quarter's issue)
//   tall-q-g    tall-q-ss with each K block's A scales loaded from global memory a K block ahead (no barrier, no
//               shared-memory read; the rows of the first M block whatever the tile: timing only, no checksum)
//   tall-q-g2   tall-q-g with the loads two K blocks ahead (a second set of scale registers)
// each without and with the promotion (out += a_scale(row) * acc per wave or half, the FP32 work of the block-scale
// promotion) and with the copies (feed copies) or stages of no bytes (feed none). Prints per variant and grid (128, 132
// CTAs) the median and slowest CTA's ns per K block, the SM clock and the cycles per K block, and checks that wide-rs
// computed what wide-ss did, and tall-q-rs1 / rs2 / ss / e / o / os what tall-ss did (a checksum per CTA of the
// results' bits). Each consumer has a kernel of its own (NOTES 117: in one kernel, ptxas's view of one consumer's
// wgmma pipeline changed the others' code), and the warpgroup index is broadcast from lane 0 so that the descriptors
// stay on the uniform datapath, as in the GEMM kernel's hot loop.
//
// `feed` on the command line: where the copies' cost goes (NOTES 112: with them the SM clock drops ~8% and the
// cycles per K block hardly move). The tall-ss consumer, with and without the promotion, fed four ways:
//   copies      as above
//   hot         every pair copies the same tile's K blocks (all L2 hits after the first pass: no HBM traffic)
//   own         each CTA loads its whole A itself (no multicast: twice the L2 reads of A)
//   none        stages of no bytes
//
// Build (sm_90a): nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I cuda
//   benchmarks/experiments/a_reuse_ring.cu -o /tmp/a_reuse_ring   Run: /tmp/a_reuse_ring [feed | only NAME,NAME]
#include "ring_util.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace jdg::ptx;

constexpr int kBlockK = 128, kStages = 3;
constexpr int kM = 4096, kN = 7168, kK = 16384, kKBlocks = kK / kBlockK;
constexpr int kStageBytes = 48 * 1024 + 1024;  // A and B (1024-byte aligned), the A scales

// The tile shapes: kTall 256 x 128, else 128 x 256. The same number of tiles, bands of 2048 columns.
template <bool kTall>
struct Tile {
  static constexpr int kBlockM = kTall ? 256 : 128, kBlockN = kTall ? 128 : 256;
  static constexpr int kMBlocks = kM / kBlockM, kPairs = kN / kBlockN / 2, kBandPairs = 1024 / kBlockN;
  static constexpr int kTiles = kMBlocks * kPairs * 2;
  static constexpr int kABytes = kBlockM * kBlockK, kBBytes = kBlockN * kBlockK, kSABytes = kBlockM * 4;
  // A pair's tile index in the banded order (bands of kBandPairs pairs, the last one narrower) -> its M block and the
  // pair's first N block.
  static __device__ void pair_tile(int index, int& m_block, int& n_block) {
    const int band = index / (kMBlocks * kBandPairs), first = band * kBandPairs;
    const int width = kPairs - first < kBandPairs ? kPairs - first : kBandPairs;
    const int in_band = index - band * kMBlocks * kBandPairs;
    m_block = in_band / width;
    n_block = 2 * (first + in_band % width);
  }
};
static_assert(Tile<true>::kTiles == Tile<false>::kTiles, "both shapes cover the problem in as many tiles");

enum Feed { kNone, kCopies, kHot, kOwn, kFeeds };
const char* const kFeedNames[kFeeds] = {"none", "copies", "hot", "own"};

enum Consumer {
  kTallSs, kWideSs, kWideRs, kWideN256, kTallQRs1, kTallQRs2, kTallQSs, kTallQC1, kTallQC2, kTallQE, kTallQEF,
  kTallQO, kTallQOS, kTallQG, kTallQG2, kTallQC3, kTallQC4, kTallQC5, kTallQR, kConsumers
};
const char* const kConsumerNames[kConsumers] = {"tall-ss",   "wide-ss",   "wide-rs",   "wide-n256", "tall-q-rs1",
                                                "tall-q-rs2", "tall-q-ss", "tall-q-c1", "tall-q-c2", "tall-q-e",
                                                "tall-q-ef", "tall-q-o",  "tall-q-os", "tall-q-g",
                                                "tall-q-g2", "tall-q-c3", "tall-q-c4", "tall-q-c5", "tall-q-r"};
__host__ __device__ constexpr bool is_tall(int consumer) { return consumer == kTallSs || consumer >= kTallQRs1; }

// Four 8 x 16-byte matrices: rows 0-7 / 8-15 of the warp's 16, K bytes 0-15 / 16-31 of the k step; register i of
// lane t holds bytes 4 * (t % 4) .. + 3 of row t / 4 of matrix i: the wgmma A fragment for 8-bit types.
__device__ __forceinline__ void ldmatrix_x4(unsigned int addr, unsigned int (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

__device__ __forceinline__ void wgmma_rs_n128_e4m3(float (&d)[64], const unsigned int (&a)[4],
                                                   unsigned long long desc_b, unsigned int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "{%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_rs_n64_e4m3(float (&d)[32], const unsigned int (&a)[4],
                                                  unsigned long long desc_b, unsigned int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "{%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

// This thread's warpgroup, broadcast from lane 0 so that ptxas knows it is the same in every lane of the warp: what is
// computed from it (the wgmma descriptors) then stays on the uniform datapath, with no R2UR move before each wgmma.
__device__ __forceinline__ int uniform_warpgroup() { return __shfl_sync(0xffffffffu, threadIdx.x / 128, 0); }

using LoopTimer = RingTimer<kStages, kKBlocks>;

__device__ const float* g_a_scales;  // tall-q-g: the A scales in global memory, [K blocks, M]

// XOR of the results' bits over the CTA's threads: equal for two consumers that computed the same values in the same
// order (wide-ss and wide-rs).
template <int N>
__device__ void checksum(const float (&out)[N], unsigned int* sums) {
  unsigned int x = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) x ^= __float_as_uint(out[j]) * (2 * j + 1);
  atomicXor(sums + blockIdx.x, x);
}

// One K block's four wgmmas into acc, issue(k) issuing the k-th, waited for.
template <int N, typename Issue>
__device__ __forceinline__ void k_block(float (&acc)[N], Issue issue) {
  fence_operands(acc);
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < 4; ++k) issue(k);
  wgmma_commit_group();
  wgmma_wait_group<0>();
  fence_operands(acc);
}

// The same with A and B from shared memory: m64nNk32 wgmmas, the k-th step 32 bytes along the swizzled rows.
template <int N>
__device__ __forceinline__ void ss_k_block(float (&acc)[N / 2], unsigned long long desc_a, unsigned long long desc_b) {
  k_block(acc, [&](int k) { wgmma_fp8<N, false, false>(acc, desc_a | (2 * k), desc_b | (2 * k), k > 0); });
}

// out += a_scale(row) * acc (kPromote), else out = acc; sa0 / sa1: the scales of the thread's rows r and r + 8.
template <bool kPromote>
__device__ __forceinline__ void promote(float (&out)[64], const float (&acc)[64], float sa0, float sa1) {
#pragma unroll
  for (int j = 0; j < 64; ++j) out[j] = kPromote ? fmaf((j / 2) % 2 ? sa1 : sa0, acc[j], out[j]) : acc[j];
}

// 256 x 128: warpgroup wg takes rows wg * 128 .. + 127 in two 64-row waves (the kernel's loop).
template <bool kPromote>
__device__ void consume_tall(unsigned int full, unsigned int empty, unsigned int base, int total, LoopTimer& timer,
                             unsigned int* sums) {
  using T = Tile<true>;
  const int wg = uniform_warpgroup(), lane = threadIdx.x % 32, row = (threadIdx.x % 128) / 32 * 16 + lane / 4;
  float acc[64], out[2][64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = out[0][i] = out[1][i] = 0.f;
#pragma unroll 1
  for (int i = 0; i < total; ++i) {
    const int stage = i % kStages;
    timer.wait_full(full, i);
    const unsigned int dst = base + stage * kStageBytes;
    const unsigned long long desc_b = make_smem_desc_sw128(dst + T::kABytes);
    const float* sa = reinterpret_cast<const float*>(__cvta_shared_to_generic(dst + T::kABytes + T::kBBytes));
#pragma unroll
    for (int v = 0; v < 2; ++v) {
      const int wave_row0 = (wg * 2 + v) * 64;
      const float sa0 = sa[wave_row0 + row], sa1 = sa[wave_row0 + row + 8];
      ss_k_block<128>(acc, make_smem_desc_sw128(dst + wave_row0 * kBlockK), desc_b);
      if (v == 1 && lane < 2) mbarrier_arrive_cluster(empty + 8 * stage, lane);
      promote<kPromote>(out[v], acc, sa0, sa1);
    }
  }
  checksum(out[0], sums);
  checksum(out[1], sums);
}

// 128 x 256: warpgroup wg takes rows wg * 64 .. + 63 in two n128 halves (kRs: A from registers, loaded once per K
// block).
template <bool kPromote, bool kRs>
__device__ void consume_wide(unsigned int full, unsigned int empty, unsigned int base, int total, LoopTimer& timer,
                             unsigned int* sums) {
  using T = Tile<false>;
  const int wg = uniform_warpgroup(), warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = wg * 64 + (threadIdx.x % 128) / 32 * 16 + lane / 4;
  // ldmatrix: this lane's row of matrix lane / 8 (bit 0: rows + 8, bit 1: K bytes + 16), 128-byte swizzle (16-byte
  // chunk c of row r at c ^ r % 8)
  const int mi = lane / 8, r = lane % 8;
  const unsigned int frag_row = wg * 64 + (warp % 4) * 16 + (mi & 1) * 8 + r;
  float acc[64], out[2][64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = out[0][i] = out[1][i] = 0.f;
#pragma unroll 1
  for (int i = 0; i < total; ++i) {
    const int stage = i % kStages;
    timer.wait_full(full, i);
    const unsigned int dst = base + stage * kStageBytes;
    const unsigned long long desc_a = make_smem_desc_sw128(dst + wg * 64 * kBlockK);
    const float* sa = reinterpret_cast<const float*>(__cvta_shared_to_generic(dst + T::kABytes + T::kBBytes));
    const float sa0 = sa[row], sa1 = sa[row + 8];
    unsigned int a_frag[4][4];
    if constexpr (kRs) {
      const unsigned int wave_a = dst + frag_row * 128;
#pragma unroll
      for (int k = 0; k < 4; ++k) ldmatrix_x4(wave_a + ((((2 * k + (mi >> 1)) ^ r) & 7) << 4), a_frag[k]);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const unsigned long long desc_b = make_smem_desc_sw128(dst + T::kABytes + h * 128 * kBlockK);
      if constexpr (kRs) {
        k_block(acc, [&](int k) { wgmma_rs_n128_e4m3(acc, a_frag[k], desc_b | (2 * k), k > 0); });
      } else {
        ss_k_block<128>(acc, desc_a, desc_b);
      }
      if (h == 1 && lane < 2) mbarrier_arrive_cluster(empty + 8 * stage, lane);
      promote<kPromote>(out[h], acc, sa0, sa1);
    }
  }
  checksum(out[0], sums);
  checksum(out[1], sums);
}

// 256 x 128 in quarters (tall-q-rs1 / 2): quarter j of a warpgroup is K block j / 4, wave (j / 2) % 2 (64 rows),
// column half j % 2 (64 columns, accumulator acc[j % 2]). Each step issues quarter j + 1, waits for quarter j (one
// wgmma group left in flight) and promotes it into out[wave][32 * half ..] (the n128 fragment's order, so that the
// checksums equal tall-ss's). With one A fragment (kFrags 1) a wave's first quarter needs the previous wave's last
// retired before its ldmatrix (a wait for all); with two, fragment w belongs to wave w; with none (tall-q-ss) A comes
// from shared memory.
template <bool kPromote, int kFrags, int kFixed = 0>
__device__ void consume_quarters(unsigned int full, unsigned int empty, unsigned int base, int total,
                                 LoopTimer& timer, unsigned int* sums) {
  using T = Tile<true>;
  const int wg = uniform_warpgroup(), warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = (threadIdx.x % 128) / 32 * 16 + lane / 4;  // the thread's first row in a wave
  const int mi = lane / 8, r = lane % 8;                      // ldmatrix: see consume_wide
  const unsigned int frag_row = (warp % 4) * 16 + (mi & 1) * 8 + r;
  float acc[2][32], out[2][64];
#pragma unroll
  for (int i = 0; i < 64; ++i) out[0][i] = out[1][i] = 0.f;
#pragma unroll
  for (int i = 0; i < 32; ++i) acc[0][i] = acc[1][i] = 0.f;
  unsigned int frag[kFrags > 0 ? kFrags : 1][4][4];
  float sa[2][2];  // the A scales of the K block being promoted: wave, row r / r + 8
  float early_sa[2][2];  // kFixed 3 / 4: the next K block's, read two quarters ahead
  constexpr bool kEarly = kFixed >= 3 && kFixed <= 5;
  constexpr bool kRunningOffset = kFixed == 5 || kFixed == 6;
  constexpr bool kKeepScales = kFixed == 9 || kFixed == 10;  // c3 / c4: the first K block's for the whole loop
  float global_sa[2][2];  // kFixed 7: the next K block's, loaded at its first quarter (8: the one after)
  float global_sa2[2][2];  // kFixed 8: the next K block's
  constexpr unsigned int kStageOff = kStageBytes >> 4;  // one stage in the descriptors' start-address field
  unsigned int off = 0;                                 // kRunningOffset: the issued K block's stage, times that
  const unsigned long long desc_a0 = make_smem_desc_sw128(base + wg * 2 * 64 * kBlockK);
  const unsigned long long desc_b0 = make_smem_desc_sw128(base + T::kABytes);
  auto stage_of = [&](int kb) { return base + (kb % kStages) * kStageBytes; };
  auto load_frag = [&](int kb, int wave, unsigned int (&f)[4][4]) {
    const unsigned int wave_a = stage_of(kb) + ((wg * 2 + wave) * 64 + frag_row) * 128;
#pragma unroll
    for (int k = 0; k < 4; ++k) ldmatrix_x4(wave_a + ((((2 * k + (mi >> 1)) ^ r) & 7) << 4), f[k]);
  };
  auto read_scales = [&](int kb, float (&s)[2][2]) {
    if constexpr (kFixed == 7 || kFixed == 8) {
      const float* p = g_a_scales + static_cast<size_t>(kb % kKBlocks) * kM;
#pragma unroll
      for (int w = 0; w < 2; ++w) {
        s[w][0] = __ldg(p + (wg * 2 + w) * 64 + row);
        s[w][1] = __ldg(p + (wg * 2 + w) * 64 + row + 8);
      }
      return;
    }
    if constexpr (kFixed == 2) {
      s[0][0] = s[1][0] = 0.5f, s[0][1] = s[1][1] = 0.25f;
      return;
    }
    if constexpr (kFixed == 10) {
      s[0][0] = s[1][0] = s[0][1] = s[1][1] = __ldg(g_a_scales + wg);
      return;
    }
    const float* p = reinterpret_cast<const float*>(__cvta_shared_to_generic(stage_of(kb) + T::kABytes + T::kBBytes));
#pragma unroll
    for (int w = 0; w < 2; ++w) {
      s[w][0] = p[(wg * 2 + w) * 64 + row];
      s[w][1] = p[(wg * 2 + w) * 64 + row + 8];
    }
  };
  auto issue = [&](int kb, int wave, int half, float (&a)[32], const unsigned int (&f)[4][4], unsigned int koff) {
    constexpr bool kStageZero = kFixed == 1 || kFixed == 2 || kFixed == 4 || (kFixed >= 9 && kFixed <= 11);
    const unsigned int stage = kStageZero ? base : stage_of(kb);
    unsigned long long desc_b = make_smem_desc_sw128(stage + T::kABytes + half * 64 * kBlockK);
    unsigned long long desc_a = make_smem_desc_sw128(stage + (wg * 2 + wave) * 64 * kBlockK);
    if constexpr (kFixed == 3) {  // stage 0's plus the offset (>> 4) in the start-address field: no carry out of it
      const unsigned int off = (kb % kStages) * (kStageBytes >> 4);
      desc_b = desc_b0 + off + half * (64 * kBlockK >> 4);
      desc_a = desc_a0 + off + wave * (64 * kBlockK >> 4);
    }
    if constexpr (kRunningOffset) {
      desc_b = desc_b0 + koff + half * (64 * kBlockK >> 4);
      desc_a = desc_a0 + koff + wave * (64 * kBlockK >> 4);
    }
    fence_operands(a);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (kFrags > 0) {
        wgmma_rs_n64_e4m3(a, f[k], desc_b | (2 * k), k > 0);
      } else {
        wgmma_fp8<64, false, false>(a, desc_a | (2 * k), desc_b | (2 * k), k > 0);
      }
    }
    wgmma_commit_group();
  };
  // Quarter 4 kb + q: issue the next one (none after the last K block's last), wait for this one, promote it.
  auto step = [&](int kb, auto q_constant, auto last_constant) {
    constexpr int q = decltype(q_constant)::value, wave = q / 2, half = q % 2;
    constexpr int nwave = ((q + 1) / 2) % 2, nhalf = (q + 1) % 2;
    constexpr bool more = !(decltype(last_constant)::value && q == 3);
    const int nkb = q == 3 ? kb + 1 : kb;
    float next_sa[2][2];
    bool waited_all = false;
    if constexpr (more) {
      unsigned int (&f)[4][4] = frag[kFrags == 2 ? nwave : 0];
      if constexpr (nhalf == 0) {  // a new wave: its A fragment first
        if constexpr (kFrags == 1) {
          wgmma_wait_group<0>();  // quarter j, the previous wave's last, still reads the fragment
          waited_all = true;
        }
        if constexpr (q == 3 && !kEarly && kFixed != 7 && kFixed != 8) {  // a new K block
          timer.wait_full(full, nkb);
          if constexpr (!kKeepScales) read_scales(nkb, next_sa);
        }
        if constexpr (q == 3 && (kFixed == 7 || kFixed == 8)) timer.wait_full(full, nkb);
        if constexpr (q == 1 && kEarly && !decltype(last_constant)::value) {  // the next K block's, two quarters ahead
          timer.wait_full(full, kb + 1);
          read_scales(kb + 1, early_sa);
        }
        if constexpr (kFrags > 0) load_frag(nkb, nwave, f);
      }
      if constexpr (q == 0 && kFixed == 7) read_scales(kb + 1, global_sa);
      if constexpr (q == 0 && kFixed == 8) read_scales(kb + 2, global_sa);
      const unsigned int noff = q == 3 ? (off == 2 * kStageOff ? 0u : off + kStageOff) : off;
      issue(nkb, nwave, nhalf, acc[nhalf], f, noff);
      if constexpr (q == 3) off = noff;
    }
    if (!waited_all) {
      if constexpr (more) {
        wgmma_wait_group<1>();
      } else {
        wgmma_wait_group<0>();
      }
    }
    fence_operands(acc[half]);
    if (q == 3 && lane < 2) mbarrier_arrive_cluster(empty + 8 * (kb % kStages), lane);  // K block kb is done
#pragma unroll
    for (int n = 0; n < 32; ++n) {  // c5, r: row r's 16 elements, then row r + 8's
      const int i = kFixed >= 11 ? (n < 16 ? n / 2 * 4 + n % 2 : (n - 16) / 2 * 4 + 2 + n % 2) : n;
      float& o = out[wave][32 * half + i];
      o = kPromote ? fmaf((i / 2) % 2 ? sa[wave][1] : sa[wave][0], acc[half][i], o) : acc[half][i];
    }
    if constexpr (q == 3 && more && !kKeepScales) {
#pragma unroll
      for (int w = 0; w < 2; ++w)
        for (int i = 0; i < 2; ++i) {
          sa[w][i] = kFixed == 8   ? global_sa2[w][i]
                     : kFixed == 7 ? global_sa[w][i]
                     : kEarly      ? early_sa[w][i]
                                   : next_sa[w][i];
          if constexpr (kFixed == 8) global_sa2[w][i] = global_sa[w][i];
        }
    }
  };
  using No = std::false_type;
  using Yes = std::true_type;
  timer.wait_full(full, 0);
  read_scales(0, sa);
  if constexpr (kFixed == 8) read_scales(1, global_sa2);
  if constexpr (kFrags > 0) load_frag(0, 0, frag[0]);
  issue(0, 0, 0, acc[0], frag[0], 0u);
  // The count through an empty asm, and the last K block's branch kept with its other path: ptxas must see the same
  // waits on every path to keep the wgmmas asynchronous (as the kernel's split_pass).
  int kb_end = total;
  asm volatile("" : "+r"(kb_end));
  int kb = 0;
#pragma unroll 1
  for (; kb + 1 < kb_end; ++kb) {
    step(kb, std::integral_constant<int, 0>{}, No{});
    step(kb, std::integral_constant<int, 1>{}, No{});
    step(kb, std::integral_constant<int, 2>{}, No{});
    step(kb, std::integral_constant<int, 3>{}, No{});
  }
  if (kb < kb_end) {
    step(kb, std::integral_constant<int, 0>{}, Yes{});
    step(kb, std::integral_constant<int, 1>{}, Yes{});
    step(kb, std::integral_constant<int, 2>{}, Yes{});
    step(kb, std::integral_constant<int, 3>{}, Yes{});
  } else {
    wgmma_wait_group<0>();
    fence_operands(acc[0]);
  }
  checksum(out[0], sums);
  checksum(out[1], sums);
}

// 128 x 256, one m64n256k32 wgmma per K step and warpgroup, no promotion (the accumulator takes 128 registers).
__device__ void consume_n256(unsigned int full, unsigned int empty, unsigned int base, int total, LoopTimer& timer,
                             unsigned int* sums) {
  using T = Tile<false>;
  const int wg = uniform_warpgroup(), lane = threadIdx.x % 32;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;
#pragma unroll 1
  for (int i = 0; i < total; ++i) {
    const int stage = i % kStages;
    timer.wait_full(full, i);
    const unsigned int dst = base + stage * kStageBytes;
    ss_k_block<256>(acc, make_smem_desc_sw128(dst + wg * 64 * kBlockK), make_smem_desc_sw128(dst + T::kABytes));
    if (lane < 2) mbarrier_arrive_cluster(empty + 8 * stage, lane);
  }
  checksum(acc, sums);
}

// One kernel per consumer and promotion: ptxas judges each kernel's wgmma pipeline as a whole, so that one consumer's
// pattern it cannot follow (C7514) would serialize every other consumer's wgmmas in a shared kernel.
template <int kConsumer, bool kPromote>
__device__ __forceinline__ void consume(unsigned int full, unsigned int empty, unsigned int base, int total,
                                       LoopTimer& timer, unsigned int* sums) {
  if constexpr (kConsumer == kTallSs) consume_tall<kPromote>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kWideSs) consume_wide<kPromote, false>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kWideRs) consume_wide<kPromote, true>(full, empty, base, total, timer, sums);
  if constexpr (!kPromote && kConsumer == kWideN256) consume_n256(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQRs1) consume_quarters<kPromote, 1>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQRs2) consume_quarters<kPromote, 2>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQSs) consume_quarters<kPromote, 0>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQC1) consume_quarters<kPromote, 0, 1>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQC2) consume_quarters<kPromote, 0, 2>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQE) consume_quarters<kPromote, 0, 3>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQEF) consume_quarters<kPromote, 0, 4>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQO) consume_quarters<kPromote, 0, 5>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQOS) consume_quarters<kPromote, 0, 6>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQG) consume_quarters<kPromote, 0, 7>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQG2) consume_quarters<kPromote, 0, 8>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQC3) consume_quarters<kPromote, 0, 9>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQC4) consume_quarters<kPromote, 0, 10>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQC5) consume_quarters<kPromote, 0, 11>(full, empty, base, total, timer, sums);
  if constexpr (kConsumer == kTallQR) consume_quarters<kPromote, 0, 12>(full, empty, base, total, timer, sums);
}

// Thread 256 copies the tiles of shape kTall as `feed` says, the consumers release each stage in both
// CTAs after their wgmmas (one arrival per warp).
template <int kConsumer, bool kPromote>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
    ring_kernel(const __grid_constant__ CUtensorMap tmap_a_half, const __grid_constant__ CUtensorMap tmap_b,
                const __grid_constant__ CUtensorMap tmap_sa, int feed, unsigned long long* ps_per_kblock,
                unsigned int* mhz, unsigned int* sums) {
  using T = Tile<is_tall(kConsumer)>;
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bars[2 * kStages];
  const unsigned int full = smem_addr(bars), empty = smem_addr(bars + kStages);
  const unsigned int rank = cluster_cta_rank();
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full + 8 * s, 1);
      mbarrier_init(empty + 8 * s, 16);  // both CTAs' 8 consumer warps: each producer's multicasts land in both
    }
    fence_barrier_init();
  }
  cluster_sync();
  const unsigned int base = (smem_addr(smem) + 1023u) & ~1023u;
  const int pairs_in_grid = gridDim.x / 2, pair = blockIdx.x / 2;
  const int my_tiles = (T::kTiles / 2 - pair + pairs_in_grid - 1) / pairs_in_grid;  // this pair's tiles
  const int total = my_tiles * kKBlocks;
  if (threadIdx.x >= 256) {  // producer warpgroup
    setmaxnreg_dec<40>();
    if (threadIdx.x == 256) {
      for (int i = 0; i < total; ++i) {
        const int stage = i % kStages, kb = i % kKBlocks;
        int m_block, n_block;
        T::pair_tile(feed == kHot ? 0 : pair + (i / kKBlocks) * pairs_in_grid, m_block, n_block);
        mbarrier_wait(empty + 8 * stage, ((i / kStages) & 1u) ^ 1u);
        const unsigned int bar = full + 8 * stage, dst = base + stage * kStageBytes;
        if (feed == kNone) {
          mbarrier_arrive_expect_tx(bar, 0);
          continue;
        }
        mbarrier_arrive_expect_tx(bar, T::kABytes + T::kBBytes + T::kSABytes);
        const int row0 = m_block * T::kBlockM;
        if (feed == kOwn) {
          for (int h = 0; h < 2; ++h)
            tma_load_2d(dst + h * T::kABytes / 2, &tmap_a_half, bar, kb * kBlockK, row0 + h * T::kBlockM / 2);
        } else {
          tma_load_2d_multicast(dst + rank * T::kABytes / 2, &tmap_a_half, bar, kb * kBlockK,
                                row0 + rank * T::kBlockM / 2, 3);
        }
        tma_load_2d(dst + T::kABytes, &tmap_b, bar, kb * kBlockK, (n_block + rank) * T::kBlockN);
        tma_load_2d(dst + T::kABytes + T::kBBytes, &tmap_sa, bar, row0, kb);
      }
    }
    __syncwarp();
  } else {
    setmaxnreg_inc<232>();
    LoopTimer timer;
    consume<kConsumer, kPromote>(full, empty, base, total, timer, sums);
    if (threadIdx.x == 0) timer.record(total, ps_per_kblock, mhz);
  }
  __syncwarp();     // cluster_sync is .aligned: each warp converged
  cluster_sync();  // no remote arrival or multicast may reach a CTA that has exited
}

// ring_kernel<consumer, promote> on `ctas` CTAs (consumer and promote at run time: found by recursion over C).
template <int C>
void launch(int consumer, int promote, int ctas, int smem, const std::vector<CUtensorMap>& m, int feed,
            unsigned long long* ps, unsigned int* mhz, unsigned int* sums) {
  if constexpr (C < kConsumers) {
    if (consumer != C) return launch<C + 1>(consumer, promote, ctas, smem, m, feed, ps, mhz, sums);
    auto kernel = promote ? ring_kernel<C, true> : ring_kernel<C, false>;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    kernel<<<ctas, 384, smem>>>(m[0], m[1], m[2], feed, ps, mhz, sums);
  }
}

struct Timing {
  double ns, max_ns, mhz;
  std::vector<unsigned int> sums;
};

int main(int argc, char** argv) {
  const bool feed_study = argc > 1 && std::string(argv[1]) == "feed";
  // `only NAME,NAME,...`: just those consumers (and the checks between two of them).
  std::vector<bool> chosen(kConsumers, true);
  if (argc > 2 && std::string(argv[1]) == "only") {
    const std::string list = "," + std::string(argv[2]) + ",";
    for (int c = 0; c < kConsumers; ++c)
      chosen[c] = list.find("," + std::string(kConsumerNames[c]) + ",") != std::string::npos;
  }
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // every line out at once, even if a variant hangs
  std::printf("%s, %d SMs; %d x %d x %d in clusters of 2 sharing A, %d stages of 48 KB\n", prop.name, sms, kM, kN, kK,
              kStages);
  const GemmOperands ops = make_gemm_operands(kM, kN, kK);
  CHECK(cudaMemcpyToSymbol(g_a_scales, &ops.sa, sizeof(ops.sa)));
  unsigned long long* ps;
  unsigned int *mhz, *sums;
  CHECK(cudaMalloc(&ps, sms * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&mhz, sms * sizeof(unsigned int)));
  CHECK(cudaMalloc(&sums, sms * sizeof(unsigned int)));
  const int smem = kStages * kStageBytes + 1024;  // + alignment of the stages to 1024 bytes
  auto maps = [&](bool tall) {
    const int block_m = tall ? 256 : 128, block_n = tall ? 128 : 256;
    return std::vector<CUtensorMap>{
        make_map(ops.a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, kM, kK, block_m / 2, kBlockK, CU_TENSOR_MAP_SWIZZLE_128B),
        make_map(ops.b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, kN, kK, block_n, kBlockK, CU_TENSOR_MAP_SWIZZLE_128B),
        make_map(ops.sa, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, kKBlocks, kM, 1, block_m, CU_TENSOR_MAP_SWIZZLE_NONE)};
  };
  const std::vector<CUtensorMap> tall_maps = maps(true), wide_maps = maps(false);
  // Median and slowest CTA's ns per K block, the median CTA's SM clock and the checksums, of the last of three
  // launches.
  auto time = [&](int consumer, int promote, int feed, int ctas) {
    const bool tall = is_tall(consumer);
    const std::vector<CUtensorMap>& m = tall ? tall_maps : wide_maps;
    for (int rep = 0; rep < 3; ++rep) {
      CHECK(cudaMemset(sums, 0, sms * sizeof(unsigned int)));
      launch<0>(consumer, promote, ctas, smem, m, feed, ps, mhz, sums);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
    }
    std::vector<unsigned long long> host(ctas);
    std::vector<unsigned int> clocks(ctas), check(ctas);
    CHECK(cudaMemcpy(host.data(), ps, ctas * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(clocks.data(), mhz, ctas * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(check.data(), sums, ctas * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    std::sort(host.begin(), host.end());
    std::sort(clocks.begin(), clocks.end());
    return Timing{host[ctas / 2] / 1000.0, host[ctas - 1] / 1000.0, double(clocks[ctas / 2]), check};
  };
  std::printf("%-10s %8s %6s %5s %10s %10s %7s %12s\n", "consumer", "promote", "feed", "CTAs", "ns/K blk", "max",
              "MHz", "cycles/K blk");
  if (feed_study) {
    for (int round = 0; round < 3; ++round)
      for (int promote : {0, 1})
        for (int feed : {kCopies, kHot, kOwn, kNone}) {
          const Timing t = time(kTallSs, promote, feed, 128);
          std::printf("%-10s %8s %6s %5d %10.1f %10.1f %7.0f %12.0f\n", kConsumerNames[kTallSs], promote ? "yes" : "no",
                      kFeedNames[feed], 128, t.ns, t.max_ns, t.mhz, t.ns * t.mhz / 1000.0);
        }
    return 0;
  }
  for (int round = 0; round < 2; ++round)
    for (int promote : {0, 1})
      for (int feed : {kCopies, kNone})
        for (int ctas : {128, sms / 2 * 2})
          for (int consumer = 0; consumer < kConsumers; ++consumer) {
            if ((promote && consumer == kWideN256) || !chosen[consumer]) continue;
            const Timing t = time(consumer, promote, feed, ctas);
            std::printf("%-10s %8s %6s %5d %10.1f %10.1f %7.0f %12.0f\n", kConsumerNames[consumer],
                        promote ? "yes" : "no", kFeedNames[feed], ctas, t.ns, t.max_ns, t.mhz,
                        t.ns * t.mhz / 1000.0);
          }
  // wide-rs must compute what wide-ss does (same values, same order), and tall-q-rs1 / 2 what tall-ss does: else
  // their fragments are wrong.
  for (int promote : {0, 1})
    for (auto [a, b] : {std::pair{kWideRs, kWideSs}, std::pair{kTallQRs1, kTallSs}, std::pair{kTallQRs2, kTallSs},
                           std::pair{kTallQSs, kTallSs}, std::pair{kTallQE, kTallSs},
                           std::pair{kTallQO, kTallSs}, std::pair{kTallQOS, kTallSs}, std::pair{kTallQR, kTallSs}}) {
      if (!chosen[a] || !chosen[b]) continue;
      const Timing ref = time(b, promote, kCopies, 128), t = time(a, promote, kCopies, 128);
      std::printf("check promote=%d: %s %s %s on all 128 CTAs (CTA 0: %08x %08x)\n", promote, kConsumerNames[a],
                  t.sums == ref.sums ? "equals" : "DIFFERS FROM", kConsumerNames[b], t.sums[0], ref.sums[0]);
    }
  return 0;
}
