// The transposing FP8 quantization kernel `jdg_fp8_quantize_t`: x [batch, rows, cols] (bfloat16 or float32) to the
// float8_e4m3fn quantization of x^T, [batch, cols, out_rows], in one pass over x. It makes the operands that the
// GEMMs want transposed: weights W [K, N] as W^T's 128x128 blocks, and the token-major 1x128 operands of the weight
// gradients (X^T, grad^T), each group's tokens starting at a 128-row block where the groups are k-grouped.
//
// A generated source #defines the macros below, then #includes this file (fp8_quantize_abi.h has the contract):
//   JDG_Q_IN_F32     0: x is bfloat16; 1: x is float32
//   JDG_Q_PER_BLOCK  0: one scale per output row and 128-row block of x (scale [batch, cols, rblocks]);
//                    1: one scale per 128x128 block (scale [batch, ceil(cols / 128), rblocks])
//   JDG_Q_BLOCK_MAP  0: row block b of the output is rows 128 b .. of x (out_rows = rows);
//                    1: it is rows block_src[b] .. block_src[b] + block_rows[b] - 1 of x, then zeros
//                       (out_rows = 128 rblocks); device data, clamped to x whatever it holds
//
// The arithmetic is jax_deepgemm.quantization's, bit for bit: scale = max(amax, 1e-4) / 448, q = clip(x / scale,
// -448, 448) rounded to nearest even, NaN propagated by the max and the clip as XLA's maximum / minimum do.
//
// One CTA per (batch, 128-column tile, 128-row block): 8 warps, warp w holding rows 16 w .. 16 w + 15 of the block
// and lane l columns l, l + 32, l + 64, l + 96 of the tile (each load instruction of a warp reads 32 adjacent
// elements of one row). The column amaxes meet in shared memory; each thread then converts its 16 rows of a column
// into 16 bytes of one output row, stored into a shared tile (one output row per 144-byte line: the 8 lanes of a
// 16-byte store phase land in distinct banks), which the CTA writes out as 128-byte row segments.
#pragma once

#include <jax_deepgemm/fp8_quantize_abi.h>

#ifndef JDG_Q_IN_F32
#error "JDG_Q_IN_F32 must be defined"
#endif
#ifndef JDG_Q_PER_BLOCK
#error "JDG_Q_PER_BLOCK must be defined"
#endif
#ifndef JDG_Q_BLOCK_MAP
#error "JDG_Q_BLOCK_MAP must be defined"
#endif

namespace jdg {
namespace fp8_quantize {

constexpr int kBlock = kFp8QuantizeBlock;    // 128: rows per block, columns per tile
constexpr int kWarps = kFp8QuantizeThreads / 32;
constexpr int kRowsPerWarp = kBlock / kWarps;  // 16
constexpr int kColsPerLane = kBlock / 32;      // 4
constexpr int kLine = kBlock + 16;             // bytes per output row in the shared tile

#if JDG_Q_IN_F32
using Input = float;
__device__ __forceinline__ float load(const Input* p) { return __ldg(p); }
#else
using Input = unsigned short;  // bfloat16 bits
__device__ __forceinline__ float load(const Input* p) { return __uint_as_float(((unsigned int)__ldg(p)) << 16); }
#endif

// max / min that return NaN when either operand is NaN (XLA's maximum and minimum).
__device__ __forceinline__ float max_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
__device__ __forceinline__ float min_nan(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

// Two floats -> two float8_e4m3fn bytes, round to nearest even: `lo` in the low byte.
__device__ __forceinline__ unsigned int pack_e4m3x2(float lo, float hi) {
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

// x / scale rounded to nearest (IEEE division), from the correctly rounded 1 / scale: Markstein's correction
// (q0 = x r, then q0 + (x - q0 scale) r with two FMAs) gives the correctly rounded quotient when no intermediate
// underflows, and a quotient that small quantizes to 0 either way. Three instructions instead of the division's
// dozen: at bfloat16 input the division alone would have made the kernel compute-bound. An infinite scale (an
// infinite x) takes the division, whose x / inf = 0 the correction would turn into NaN.
__device__ __forceinline__ float divide(float x, float scale, float inverse) {
  if (isinf(scale)) return __fdiv_rn(x, scale);
  const float q = x * inverse;
  return fmaf(fmaf(-q, scale, x), inverse, q);
}

__device__ __forceinline__ float quantize(float x, float scale, float inverse) {
  return min_nan(max_nan(divide(x, scale, inverse), -kFp8QuantizeMax), kFp8QuantizeMax);
}

}  // namespace fp8_quantize
}  // namespace jdg

extern "C" __global__ void __launch_bounds__(jdg::kFp8QuantizeThreads)
    jdg_fp8_quantize_t(const jdg::Fp8QuantizeArgs args) {
  using namespace jdg::fp8_quantize;
  __shared__ float column_amax[kWarps][kBlock];
  __shared__ float column_scale[kBlock];
#if JDG_Q_PER_BLOCK
  __shared__ float block_amax[kBlock / 32];  // one per warp of the first 128 threads
#endif
  __shared__ __align__(16) unsigned char tile[kBlock * kLine];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // CTA index -> (batch, column tile, row block), the column tile fastest: neighbouring CTAs read the same rows.
  long long cta = blockIdx.x;
  const int cblock = static_cast<int>(cta % args.cblocks);
  cta /= args.cblocks;
  const int rblock = static_cast<int>(cta % args.rblocks);
  const long long batch = cta / args.rblocks;
  const long long col0 = static_cast<long long>(cblock) * kBlock;

  // The rows of x this block holds: [src, src + count), count <= 128, inside x whatever the block map says.
  long long src, count;
#if JDG_Q_BLOCK_MAP
  count = min(max(static_cast<long long>(args.block_rows[rblock]), 0LL), static_cast<long long>(kBlock));
  count = min(count, args.rows);
  src = min(max(static_cast<long long>(args.block_src[rblock]), 0LL), args.rows - count);
#else
  src = static_cast<long long>(rblock) * kBlock;
  count = min(static_cast<long long>(kBlock), args.rows - src);
#endif

  const Input* x = static_cast<const Input*>(args.x) + batch * args.rows * args.cols;
  float v[kRowsPerWarp][kColsPerLane];
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int r = warp * kRowsPerWarp + i;
#pragma unroll
    for (int j = 0; j < kColsPerLane; ++j) {
      const long long c = col0 + lane + 32 * j;
      v[i][j] = (r < count && c < args.cols) ? load(x + (src + r) * args.cols + c) : 0.0f;
    }
  }

  // Column amaxes: over this warp's 16 rows, then over the 8 warps.
#pragma unroll
  for (int j = 0; j < kColsPerLane; ++j) {
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) amax = max_nan(amax, fabsf(v[i][j]));
    column_amax[warp][lane + 32 * j] = amax;
  }
  __syncthreads();
  if (threadIdx.x < kBlock) {
    float amax = column_amax[0][threadIdx.x];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) amax = max_nan(amax, column_amax[w][threadIdx.x]);
#if JDG_Q_PER_BLOCK
    // One amax for the whole 128x128 block: the four warps of the first 128 threads, then their four values.
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) amax = max_nan(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    if (lane == 0) block_amax[warp] = amax;
#else
    const float scale = __fdiv_rn(max_nan(amax, jdg::kFp8QuantizeAmaxFloor), jdg::kFp8QuantizeMax);
    column_scale[threadIdx.x] = scale;
    const long long c = col0 + threadIdx.x;
    if (c < args.cols) args.scale[(batch * args.cols + c) * args.rblocks + rblock] = scale;
#endif
  }
#if JDG_Q_PER_BLOCK
  __syncthreads();
  if (threadIdx.x == 0) {
    const float amax = max_nan(max_nan(block_amax[0], block_amax[1]), max_nan(block_amax[2], block_amax[3]));
    const float scale = __fdiv_rn(max_nan(amax, jdg::kFp8QuantizeAmaxFloor), jdg::kFp8QuantizeMax);
    column_scale[0] = scale;
    args.scale[(batch * args.cblocks + cblock) * args.rblocks + rblock] = scale;
  }
#endif
  __syncthreads();

  // Each thread's 16 rows of a column are 16 consecutive bytes of one output row.
#pragma unroll
  for (int j = 0; j < kColsPerLane; ++j) {
    const int col = lane + 32 * j;
    const float scale = column_scale[JDG_Q_PER_BLOCK ? 0 : col];
    const float inverse = __frcp_rn(scale);
    unsigned int word[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const unsigned int lo = pack_e4m3x2(quantize(v[4 * q][j], scale, inverse), quantize(v[4 * q + 1][j], scale, inverse));
      const unsigned int hi = pack_e4m3x2(quantize(v[4 * q + 2][j], scale, inverse),
                                             quantize(v[4 * q + 3][j], scale, inverse));
      word[q] = lo | (hi << 16);
    }
    *reinterpret_cast<uint4*>(tile + col * kLine + warp * kRowsPerWarp) = make_uint4(word[0], word[1], word[2], word[3]);
  }
  __syncthreads();

  // Out: 128 output rows (columns of x) x 128 bytes, 16 bytes per thread and step, 8 threads per row segment.
  unsigned char* out = args.out + batch * args.cols * args.out_rows;
  const long long first = static_cast<long long>(rblock) * kBlock;  // this block's first byte in an output row
  const bool aligned = args.out_rows % 16 == 0;
#pragma unroll
  for (int step = 0; step < kBlock * kBlock / 16 / jdg::kFp8QuantizeThreads; ++step) {
    const int index = step * jdg::kFp8QuantizeThreads + threadIdx.x;
    const int row = index / 8, chunk = index % 8;
    const long long c = col0 + row;
    const long long r = first + chunk * 16;
    if (c >= args.cols || r >= args.out_rows) continue;
    const unsigned char* from = tile + row * kLine + chunk * 16;
    unsigned char* to = out + c * args.out_rows + r;
    if (aligned && r + 16 <= args.out_rows) {
      *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(from);
    } else {
      for (int b = 0; b < 16 && r + b < args.out_rows; ++b) to[b] = from[b];
    }
  }
}
