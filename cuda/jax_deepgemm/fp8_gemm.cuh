// FP8 GEMM with fine-grained scaling for Hopper (sm_90a):
//
//   D[m, n] = C[m, n] + sum_kb a_scale[kb, m] * b_scale_of(n, kb) * sum_{k in block kb} A8[m, k] * B8[n, k]
//
// A8 [M, K] and B8 [N, K] are FP8 (e4m3 or e5m2), K-major; kb runs over 128-wide K blocks. The configuration comes
// from the JDG_* macros that the generated wrapper defines before including this file; fp8_gemm_abi.h is the
// contract with the host (macros, kernel signature, tensor maps, launch rules, shared-memory size).
//
// Structure (one CTA per SM, persistent):
//   warpgroups 0 .. BLOCK_M/64 - 1   consumers ("math"): each owns 64 rows of the tile and runs the wgmmas,
//                                    the per-K-block promotion and the epilogue
//   warpgroup BLOCK_M/64             producer: one elected thread issues all TMA loads
// connected by a ring of JDG_STAGES shared-memory stages (A tile BLOCK_M x 128 B, B tile BLOCK_N x 128 B), each with
// a "full" mbarrier (producer -> consumers: the TMA bytes landed) and an "empty" mbarrier (consumers -> producer:
// the stage was read and may be overwritten).
//
// Limits of this first version (tests/cuda/compile_check.py reports them; the speed work lifts them):
//  * registers: a consumer thread holds 2 x BLOCK_N/2 floats, so BLOCK_N >= 224 (128x128 B scales) or >= 192
//    (per-row B scales) spills to local memory: correct, but slow; the heuristics should stay below;
//  * each K block waits for its own wgmmas (wait_group 0) before promoting: the tensor cores of one warpgroup idle
//    during its promotion (two consumer warpgroups overlap each other);
//  * scales are read from global memory (L1/L2) by every consumer thread; the epilogue stores straight from
//    registers (no stmatrix / TMA store). Pointers: D and C must be 4-byte (bf16) / 8-byte (f32) aligned.
#pragma once

#include <jax_deepgemm/fp8_gemm_abi.h>
#include <jax_deepgemm/ptx.cuh>

#if !defined(JDG_N) || !defined(JDG_K) || !defined(JDG_BLOCK_M) || !defined(JDG_BLOCK_N) || !defined(JDG_STAGES)
#error "define JDG_N, JDG_K, JDG_BLOCK_M, JDG_BLOCK_N and JDG_STAGES before including fp8_gemm.cuh"
#endif
#if !defined(JDG_A_E5M2) || !defined(JDG_B_E5M2) || !defined(JDG_B_SCALE_PER_ROW) || !defined(JDG_OUT_F32) || \
    !defined(JDG_C_KIND)
#error "define JDG_A_E5M2, JDG_B_E5M2, JDG_B_SCALE_PER_ROW, JDG_OUT_F32 and JDG_C_KIND before including fp8_gemm.cuh"
#endif

namespace jdg {
namespace fp8_gemm {

// ------------------------------------------------------------------------------------------------ configuration

constexpr int kN = JDG_N;
constexpr int kK = JDG_K;
constexpr int kBlockM = JDG_BLOCK_M;
constexpr int kBlockN = JDG_BLOCK_N;
constexpr int kBlockK = kFp8BlockK;  // 128 FP8 = 128 bytes: one swizzled row, one scale block
constexpr int kStages = JDG_STAGES;
constexpr bool kAE5M2 = JDG_A_E5M2 != 0;
constexpr bool kBE5M2 = JDG_B_E5M2 != 0;
constexpr bool kBScalePerRow = JDG_B_SCALE_PER_ROW != 0;
constexpr bool kOutF32 = JDG_OUT_F32 != 0;
constexpr int kCKind = JDG_C_KIND;  // 0 none, 1 bf16, 2 f32

constexpr int kNumKBlocks = (kK + kBlockK - 1) / kBlockK;  // kb; the K tail of the last block is TMA zero fill
constexpr int kNumNBlocks = (kN + kBlockN - 1) / kBlockN;  // N tiles
constexpr int kNumScaleNBlocks = (kN + 127) / 128;         // nb: rows of the 128x128 B-scale grid

constexpr int kNumMathWarpgroups = kBlockM / 64;
constexpr int kNumMathThreads = 128 * kNumMathWarpgroups;
constexpr int kNumThreads = fp8_gemm_num_threads(kBlockM);

// Shared memory, carved as fp8_gemm_smem_bytes() describes (every part 1024-byte aligned: the 128-byte swizzle
// pattern repeats every 8 rows = 1024 bytes, and TMA and wgmma must agree on where it starts).
constexpr int kSmemABytes = kBlockM * kBlockK;  // one stage of A
constexpr int kSmemBBytes = kBlockN * kBlockK;  // one stage of B
constexpr int kSmemBOffset = fp8_gemm_align(kStages * kSmemABytes, 1024);
constexpr int kSmemBarOffset = kSmemBOffset + fp8_gemm_align(kStages * kSmemBBytes, 1024);
constexpr int kSmemBytes = fp8_gemm_smem_bytes(kBlockM, kBlockN, kStages);
constexpr unsigned int kStageTxBytes = kSmemABytes + kSmemBBytes;  // full boxes, OOB zero fill included

// Register split (setmaxnreg): the producer thread needs few registers; the consumers hold two BLOCK_N/2 float
// arrays (wgmma accumulator + promoted result). The pool is 64K registers per SM (per CTA here); at entry every
// warp holds the count ptxas chose: 168 for 384 threads (65536 / 384 rounded down to a multiple of 8), or the
// consumers' count for 256 threads (ptxas then compiles the whole kernel at it). 40 x 128 + 232 x 256 = 64512 fits.
constexpr int kProducerRegs = 40;
constexpr int kMathRegs = kNumMathWarpgroups == 1 ? 248 : 232;

// Tile order: bands of kBandN N-blocks; inside a band the N-block index runs fastest, then M. The CTAs working at
// the same time then share a few A row-blocks and a few B column-blocks in L2.
constexpr int kBandN = 16;

// wgmma accumulator fragment: N/2 floats per thread, 4 per 8-column chunk.
constexpr int kAccRegs = kBlockN / 2;
constexpr int kNumChunks = kBlockN / 8;

// 128x128 B scales: how many 128-column scale blocks can one BLOCK_N-wide tile touch? Tile starts are multiples
// of g = gcd(BLOCK_N, 128) modulo 128, so the worst start is 128 - g.
constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }
constexpr int kMaxBScaleBlocks = (128 - gcd(kBlockN, 128) + kBlockN - 1) / 128 + 1;

static_assert(fp8_gemm_block_m_supported(kBlockM), "BLOCK_M must be 64 or 128");
static_assert(fp8_gemm_block_n_supported(kBlockN), "BLOCK_N must be a multiple of 16 in [16, 256]");
static_assert(kStages >= 2, "the pipeline needs at least 2 stages");
static_assert(kSmemBytes <= kMaxDynamicSmemBytes, "stages x (A + B tiles) do not fit in shared memory");
static_assert(kSmemBarOffset + 2 * kStages * 8 + 1024 <= kSmemBytes, "layout disagrees with fp8_gemm_smem_bytes()");
static_assert(kN >= 1, "N must be >= 1");
static_assert(kK >= 16 && kK % 16 == 0, "K must be a positive multiple of 16 (TMA row stride)");
static_assert(kCKind >= 0 && kCKind <= 2, "JDG_C_KIND must be 0, 1 or 2");
static_assert(kMaxBScaleBlocks >= 1 && kMaxBScaleBlocks <= 3, "");
static_assert(kProducerRegs * 128 + kMathRegs * kNumMathThreads <= 65536, "register split exceeds the register file");

// ------------------------------------------------------------------------------------------------ helpers

struct alignas(8) Float2 {
  float x, y;
};

// Tile t -> (m_block, n_block) in banded order; identical in the producer and the consumers.
__device__ __forceinline__ void tile_coords(int t, int num_m_blocks, int& m_block, int& n_block) {
  const int tiles_per_band = num_m_blocks * kBandN;
  const int band = t / tiles_per_band;
  const int first_n = band * kBandN;
  const int band_width = kNumNBlocks - first_n < kBandN ? kNumNBlocks - first_n : kBandN;
  const int in_band = t - band * tiles_per_band;
  m_block = in_band / band_width;
  n_block = first_n + in_band % band_width;
}

__device__ __forceinline__ float load_c(const void* c, unsigned long long idx) {
  if constexpr (kCKind == 1) {
    return ptx::bf16_to_f32(static_cast<const unsigned short*>(c)[idx]);
  } else {
    return static_cast<const float*>(c)[idx];
  }
}

// Add C and store one pair of horizontally adjacent outputs (row, col) and (row, col + 1); col is even.
// Vector accesses need an even element offset, i.e. an even N (col is even); otherwise scalar accesses.
__device__ __forceinline__ void store_pair(const Fp8GemmArgs& args, int row, int col, float v0, float v1) {
  const unsigned long long idx = (unsigned long long)row * kN + col;
  constexpr bool kVector = kN % 2 == 0;
  if (col + 1 < kN) {
    if constexpr (kCKind == 1) {
      if constexpr (kVector) {
        const unsigned int c2 = *reinterpret_cast<const unsigned int*>(static_cast<const unsigned short*>(args.c) + idx);
        v0 += ptx::bf16_to_f32((unsigned short)(c2 & 0xFFFFu));
        v1 += ptx::bf16_to_f32((unsigned short)(c2 >> 16));
      } else {
        v0 += load_c(args.c, idx);
        v1 += load_c(args.c, idx + 1);
      }
    } else if constexpr (kCKind == 2) {
      if constexpr (kVector) {
        const Float2 c2 = *reinterpret_cast<const Float2*>(static_cast<const float*>(args.c) + idx);
        v0 += c2.x;
        v1 += c2.y;
      } else {
        v0 += load_c(args.c, idx);
        v1 += load_c(args.c, idx + 1);
      }
    }
    if constexpr (kOutF32) {
      float* d = static_cast<float*>(args.d) + idx;
      if constexpr (kVector) {
        *reinterpret_cast<Float2*>(d) = Float2{v0, v1};
      } else {
        d[0] = v0;
        d[1] = v1;
      }
    } else {
      unsigned short* d = static_cast<unsigned short*>(args.d) + idx;
      if constexpr (kVector) {
        *reinterpret_cast<unsigned int*>(d) = ptx::pack_bf16x2(v0, v1);  // packed bf16x2 store
      } else {
        d[0] = ptx::to_bf16(v0);
        d[1] = ptx::to_bf16(v1);
      }
    }
  } else if (col < kN) {  // last column of an odd N
    if constexpr (kCKind != 0) v0 += load_c(args.c, idx);
    if constexpr (kOutF32) {
      static_cast<float*>(args.d)[idx] = v0;
    } else {
      static_cast<unsigned short*>(args.d)[idx] = ptx::to_bf16(v0);
    }
  }
}

// Promotion with per-column B scales: two scales per 8-column chunk for this thread, read here (L1-resident after
// the first warp) in groups of kRowScaleGroup chunks. Left alone, the compiler hoists all BLOCK_N/4 loads to the
// top and spills the accumulators; making the next group's address depend on this group's results (an empty asm)
// bounds the scales in flight. kMasked: columns at offset >= `limit` from `row_scales` are past N and read nothing
// (predicated loads off one base pointer with immediate offsets).
template <bool kMasked>
__device__ __forceinline__ void promote_per_row(float (&out)[kAccRegs], const float (&acc)[kAccRegs],
                                                const float* row_scales, float sa0, float sa1, int limit) {
  constexpr int kRowScaleGroup = 4;
#pragma unroll
  for (int c = 0; c < kNumChunks; ++c) {
    const float sb0 = (!kMasked || 8 * c < limit) ? ptx::ldg_f32(row_scales + 8 * c) : 0.0f;
    const float sb1 = (!kMasked || 8 * c + 1 < limit) ? ptx::ldg_f32(row_scales + 8 * c + 1) : 0.0f;
    out[4 * c + 0] += sa0 * sb0 * acc[4 * c + 0];
    out[4 * c + 1] += sa0 * sb1 * acc[4 * c + 1];
    out[4 * c + 2] += sa1 * sb0 * acc[4 * c + 2];
    out[4 * c + 3] += sa1 * sb1 * acc[4 * c + 3];
    if (c % kRowScaleGroup == kRowScaleGroup - 1) ptx::depend_on(row_scales, out[4 * c + 3]);
  }
}

}  // namespace fp8_gemm
}  // namespace jdg

// ------------------------------------------------------------------------------------------------ the kernel

extern "C" __global__ void __launch_bounds__(jdg::fp8_gemm::kNumThreads, 1)
    jdg_fp8_gemm(const __grid_constant__ jdg::TmaDescriptor tensor_map_a,
                 const __grid_constant__ jdg::TmaDescriptor tensor_map_b, const jdg::Fp8GemmArgs args) {
  using namespace jdg;
  using namespace jdg::fp8_gemm;

  // Dynamic shared memory, base rounded up to 1024 bytes (the ABI reserves 1024 bytes of slack for it).
  extern __shared__ unsigned char smem_raw[];
  const unsigned int smem_base = (ptx::smem_addr(smem_raw) + 1023u) & ~1023u;
  const unsigned int smem_a = smem_base;
  const unsigned int smem_b = smem_base + kSmemBOffset;
  const unsigned int full_bars = smem_base + kSmemBarOffset;  // kStages x 8 bytes
  const unsigned int empty_bars = full_bars + 8 * kStages;    // kStages x 8 bytes

  const int warp = ptx::shfl0(static_cast<int>(threadIdx.x) / 32);  // warp-uniform by construction
  const int warpgroup = warp / 4;

  if (threadIdx.x == kNumMathThreads) {  // first producer thread: set up while the others wait
    ptx::prefetch_tensormap(&tensor_map_a);
    ptx::prefetch_tensormap(&tensor_map_b);
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(full_bars + 8 * s, 1);                       // the producer's arrive_expect_tx
      ptx::mbarrier_init(empty_bars + 8 * s, kNumMathThreads / 32);  // one arrival per consumer warp
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();

  const int m = args.m;
  const int num_m_blocks = (m + kBlockM - 1) / kBlockM;
  const int num_tiles = num_m_blocks * kNumNBlocks;

  if (warpgroup == kNumMathWarpgroups) {
    // ======================================== producer ========================================
    ptx::setmaxnreg_dec<kProducerRegs>();
    // One thread issues every copy (TMA needs no more); the rest of the warpgroup only donated its registers.
    if (warp == 4 * kNumMathWarpgroups && ptx::elect_one_sync()) {
      int stage = 0;
      unsigned int phase = 0;
      for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
        int m_block, n_block;
        tile_coords(t, num_m_blocks, m_block, n_block);
        for (int kb = 0; kb < kNumKBlocks; ++kb) {
          // Wait until the consumers released this stage (first pass: parity 1 of a fresh barrier, no wait).
          ptx::mbarrier_wait(empty_bars + 8 * stage, phase ^ 1u);
          const unsigned int full = full_bars + 8 * stage;
          ptx::mbarrier_arrive_expect_tx(full, kStageTxBytes);
          ptx::tma_load_2d(smem_a + stage * kSmemABytes, &tensor_map_a, full, kb * kBlockK, m_block * kBlockM);
          ptx::tma_load_2d(smem_b + stage * kSmemBBytes, &tensor_map_b, full, kb * kBlockK, n_block * kBlockN);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1u;
          }
        }
      }
    }
  } else {
    // ======================================== consumers ========================================
    ptx::setmaxnreg_inc<kMathRegs>();

    const int lane = static_cast<int>(threadIdx.x) % 32;
    // This thread's two accumulator rows inside the tile (fragment layout: row 16*warp + lane/4 (+8)) and its
    // first column inside each 8-column chunk (2*(lane%4), plus 0 and 1).
    const int tile_row0 = warpgroup * 64 + (warp % 4) * 16 + lane / 4;
    const int chunk_col = 2 * (lane % 4);
    const unsigned int a_wg_offset = warpgroup * 64 * kBlockK;  // this warpgroup's 64 rows of the A tile

    float acc[kAccRegs];  // tensor-core accumulator of one 128-wide K block
    float out[kAccRegs];  // promoted FP32 result of the tile

    int stage = 0;
    unsigned int phase = 0;
    for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
      int m_block, n_block;
      tile_coords(t, num_m_blocks, m_block, n_block);
      const int n0 = n_block * kBlockN;
      const int row0 = m_block * kBlockM + tile_row0;
      const int row1 = row0 + 8;

#pragma unroll
      for (int i = 0; i < kAccRegs; ++i) out[i] = 0.0f;

      // Scale pointers; rows past M and columns past N are clamped (their results are never stored).
      const float* a_scale0 = args.a_scale + (row0 < m ? row0 : m - 1);
      const float* a_scale1 = args.a_scale + (row1 < m ? row1 : m - 1);
      const float* b_scale_blk[kMaxBScaleBlocks];
#pragma unroll
      for (int j = 0; j < kMaxBScaleBlocks; ++j) {
        const int nb = n0 / 128 + j;
        b_scale_blk[j] = args.b_scale + (nb < kNumScaleNBlocks ? nb : kNumScaleNBlocks - 1) * kNumKBlocks;
      }

      for (int kb = 0; kb < kNumKBlocks; ++kb) {
        // Issue the scale loads before waiting for the tiles, so their latency hides behind the wait.
        const float sa0 = ptx::ldg_f32(a_scale0 + (long long)kb * m);
        const float sa1 = ptx::ldg_f32(a_scale1 + (long long)kb * m);
        float sb[kMaxBScaleBlocks];  // 128x128 B scales of the (up to 3) column blocks the tile touches
        if constexpr (!kBScalePerRow) {
#pragma unroll
          for (int j = 0; j < kMaxBScaleBlocks; ++j) sb[j] = ptx::ldg_f32(b_scale_blk[j] + kb);
        }

        // Wait for the stage's TMA bytes.
        ptx::mbarrier_wait(full_bars + 8 * stage, phase);

        // 4 x wgmma m64nBLOCK_Nk32 cover the 128-wide K block; the first has scale-d = 0, so the tensor-core
        // accumulator restarts at zero every K block (the promotion below does the long accumulation in FP32).
        const unsigned long long desc_a = ptx::make_smem_desc_sw128(smem_a + stage * kSmemABytes + a_wg_offset);
        const unsigned long long desc_b = ptx::make_smem_desc_sw128(smem_b + stage * kSmemBBytes);
        ptx::fence_operands(acc);
        ptx::wgmma_fence();
#pragma unroll
        for (int k = 0; k < kBlockK / 32; ++k) {
          // k * 32 bytes further along the swizzled row = + 2k in the descriptor's (address >> 4) field.
          ptx::wgmma_fp8<kBlockN, kAE5M2, kBE5M2>(acc, desc_a + 2 * k, desc_b + 2 * k, k > 0 ? 1u : 0u);
        }
        ptx::wgmma_commit_group();
        ptx::wgmma_wait_group<0>();
        ptx::fence_operands(acc);

        // The wgmmas of this warp finished reading the stage: release it (one arrival per warp).
        if (lane == 0) ptx::mbarrier_arrive(empty_bars + 8 * stage);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1u;
        }

        // Promotion (DeepSeek-V3): out += a_scale(row) * b_scale(col) * acc, in FP32 on the CUDA cores.
        if constexpr (kBScalePerRow) {
          // Per-column B scales (1x128 recipe), read inside the promotion; only a tile reaching past N needs the
          // masked (predicated) variant.
          const float* row_scales = args.b_scale + (long long)kb * kN + n0 + chunk_col;
          if (n0 + kBlockN <= kN) {
            promote_per_row<false>(out, acc, row_scales, sa0, sa1, 0);
          } else {
            promote_per_row<true>(out, acc, row_scales, sa0, sa1, kN - n0 - chunk_col);
          }
        } else if constexpr (kMaxBScaleBlocks == 1) {
          // BLOCK_N divides 128: the whole tile lies in one 128-column scale block, one scalar per K block.
          const float s0 = sa0 * sb[0], s1 = sa1 * sb[0];
#pragma unroll
          for (int i = 0; i < kAccRegs; ++i) out[i] += ((i / 2) % 2 == 0 ? s0 : s1) * acc[i];
        } else {
          // The tile may straddle 128-column scale blocks: an 8-column chunk never does (n0 and 8c are multiples
          // of 8), so each chunk selects its block, (n0 % 128 + 8c) / 128 blocks after the tile's first one.
          const int n_off = n0 % 128;
#pragma unroll
          for (int c = 0; c < kNumChunks; ++c) {
            const int sel = (n_off + 8 * c) >> 7;
            float b = sb[0];
            if (kMaxBScaleBlocks > 1 && sel >= 1) b = sb[1 < kMaxBScaleBlocks ? 1 : 0];
            if (kMaxBScaleBlocks > 2 && sel >= 2) b = sb[2 < kMaxBScaleBlocks ? 2 : 0];
            const float s0 = sa0 * b, s1 = sa1 * b;
            out[4 * c + 0] += s0 * acc[4 * c + 0];
            out[4 * c + 1] += s0 * acc[4 * c + 1];
            out[4 * c + 2] += s1 * acc[4 * c + 2];
            out[4 * c + 3] += s1 * acc[4 * c + 3];
          }
        }
      }

      // Epilogue: straight from registers to global memory, masked to rows < M and columns < N, C added first.
      // (The producer is already loading the next tile's stages meanwhile.)
#pragma unroll
      for (int c = 0; c < kNumChunks; ++c) {
        const int col = n0 + 8 * c + chunk_col;
        if (row0 < m) store_pair(args, row0, col, out[4 * c + 0], out[4 * c + 1]);
        if (row1 < m) store_pair(args, row1, col, out[4 * c + 2], out[4 * c + 3]);
      }
    }
  }
}
